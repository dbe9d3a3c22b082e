"""Telemetry through NVML in-process, where the ``pynvml`` module (the nvidia-ml-py
distribution, ``pip install 'zl-backend-cuda[nvml]'``) is importable.

It reads what the nvidia-smi query of :mod:`zl_backend_cuda.plugin` reads, in the same
units, for the same device indices: nvidia-smi is NVML's own tool, and both number
the devices NVML's way (PCI order, never renumbered by ``CUDA_VISIBLE_DEVICES``).

The pynvml API, as nvidia-ml-py defines it (checked in the pynvml.py of the releases
11.450.51 and 13.615.71):

- ``nvmlInit()``; ``nvmlDeviceGetCount()``; ``nvmlDeviceGetHandleByIndex(i)``;
  ``nvmlDeviceGetHandleByUUID(uuid)`` (11.450.51 hands the argument to ``c_char_p``
  as is, so it gets bytes; later releases also take str); ``nvmlDeviceGetIndex(h)``.
- ``nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM)`` and ``(h, NVML_CLOCK_MEM)``: MHz, as
  ``clocks.sm`` / ``clocks.mem``.
- ``nvmlDeviceGetTemperature(h, NVML_TEMPERATURE_GPU)``: degrees C, as ``temperature.gpu``.
- ``nvmlDeviceGetPowerUsage(h)``: milliwatts; ``power.draw`` is watts with two decimals.
- ``nvmlDeviceGetUtilizationRates(h).gpu``: percent, as ``utilization.gpu``.
- Failures raise ``NVMLError`` subclasses, one per return code
  (``NVMLError_NotSupported``, ``NVMLError_DriverNotLoaded``,
  ``NVMLError_LibraryNotFound``, ...); ``str(exc)`` is NVML's own wording.

A sensor NVML does not support reads as "" (nvidia-smi prints ``[N/A]`` there). Any
other failure, ``nvmlInit`` included (no driver, a driver/library version mismatch),
ends NVML sampling for this process: every later sample comes from nvidia-smi, and
the reason is kept for zl to say once.
"""

from __future__ import annotations

import threading
from importlib import metadata
from types import ModuleType

from zl_core.foundation.backend import TelemetryReading

DISTRIBUTION = "nvidia-ml-py"


class NvmlSampler:
    """NVML initialised once per process, on the first sample; then one reading a call."""

    def __init__(self) -> None:
        self._nvml: ModuleType | None = None  # the pynvml module, once nvmlInit succeeded
        self._absent = False  # pynvml is not installed: nvidia-smi, as without this module
        self._failed = ""  # why NVML cannot sample in this process
        self._name = "NVML"
        self._lock = threading.Lock()

    def read(self, device: str | None) -> TelemetryReading | None:
        """One reading of ``device`` (an index or a GPU UUID; None or "": every device),
        an unusable one naming why, or None when pynvml is not installed."""
        with self._lock:
            if self._nvml is None and not self._failed and not self._absent:
                self._start()
            if self._absent:
                return None
            nvml = self._nvml  # set unless NVML failed
            if nvml is not None and not self._failed:
                try:
                    rows = tuple(_rows(nvml, device))
                    return TelemetryReading(sampler=self._name,
                                            rows=rows)
                except Exception as exc:  # noqa: BLE001 - NVMLError, or a device NVML cannot name
                    self._failed = f"{type(exc).__name__}: {exc}"
            return TelemetryReading(sampler=self._name, unavailable=self._failed)

    def _start(self) -> None:
        try:
            import pynvml
        except ImportError:
            self._absent = True
            return
        except Exception as exc:  # noqa: BLE001 - installed but broken: say so, use nvidia-smi
            self._failed = f"import pynvml failed: {type(exc).__name__}: {exc}"
            return
        self._name = _describe(pynvml)
        try:
            pynvml.nvmlInit()
        except Exception as exc:  # noqa: BLE001 - NVMLError, or the library's own mismatch error
            self._failed = f"nvmlInit failed: {type(exc).__name__}: {exc}"
            return
        self._nvml = pynvml


def _rows(pynvml: ModuleType, device: str | None) -> list[dict[str, str]]:
    if device in (None, ""):
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    elif str(device).isdigit():
        handles = [pynvml.nvmlDeviceGetHandleByIndex(int(device))]
    elif str(device).startswith(("GPU-", "MIG-")):
        handles = [pynvml.nvmlDeviceGetHandleByUUID(str(device).encode())]
    else:
        raise ValueError(f"device {device!r} is neither an index nor a GPU UUID")
    return [_row(pynvml, handle) for handle in handles]


def _row(pynvml, handle) -> dict[str, str]:
    def read(get) -> str:
        try:
            return get()
        except pynvml.NVMLError_NotSupported:
            return ""

    return {
        "index": str(pynvml.nvmlDeviceGetIndex(handle)),
        "sm_clock_mhz": read(lambda: str(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))),
        "mem_clock_mhz": read(lambda: str(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM))),
        "temp_c": read(lambda: str(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU))),
        "power_w": read(lambda: f"{pynvml.nvmlDeviceGetPowerUsage(handle) / 1000:.2f}"),
        "util_pct": read(lambda: str(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)),
    }


def _describe(pynvml) -> str:
    """"NVML (nvidia-ml-py 13.615.71)", or where the module came from when no
    distribution of that name installed it."""
    try:
        return f"NVML ({DISTRIBUTION} {metadata.version(DISTRIBUTION)})"
    except metadata.PackageNotFoundError:
        return f"NVML (pynvml from {getattr(pynvml, '__file__', '?')})"
