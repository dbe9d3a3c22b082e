"""The CUDA backend: NVIDIA GPUs through torch.cuda, described to zl through its hooks.

Every hook answers for ``cuda`` only and returns None for any other backend, so a
plugin registered later can override one answer without forking this module.
"""

from __future__ import annotations

import os

from zl_core import Backend, TelemetryReading, hookimpl
from zl_core.foundation.backend import TargetGrammar
from zl_core.foundation.compiler_env import CompilerEnv
from zl_core.foundation.vendor_tools import answers_for, classify_by_markers, run_tool

from zl_backend_cuda.nvml import NvmlSampler

BACKEND = Backend(
    name="cuda",
    aliases=("nvidia", "nv"),
    visibility_env_keys=("CUDA_VISIBLE_DEVICES",),
    # CUDA reads an index, a GPU UUID as nvidia-smi prints it (or enough of its leading
    # characters to be unique) and a MIG-<GPU UUID>/<GI>/<CI> or MIG-<UUID> device.
    visible_id=r"\d+|GPU-[0-9A-Fa-f-]+|MIG-[0-9A-Za-z/-]+",
    visible_id_forms="a device index (0, 1, ...), a GPU-... UUID or a MIG-... device",
    torch_namespace="cuda",
    vendor="nvidia",
    graph_capture=True,
    # FlagTree's default (NVIDIA+AMD) build compiles the RemoveLayoutConversions
    # enhancement in and reads this switch at compile time ("0"/"1").
    default_switch="FLAGTREE_RLC_ENHANCE",
    # Its family: FlagTree's RLC switches and phase masks act on one pass together, and
    # the seed harness scrubbed them with DISABLE_LLVM_OPT from every cell's inherited
    # environment, so that neither side inherits a part of the switch from the shell.
    compiler_env=CompilerEnv(families=(("FLAGTREE_*RLC*", "DISABLE_LLVM_OPT"),)),
    # Triton's "cuda" compiler backend takes the SM capability as a number; Hopper
    # (the lent H200) is the default compile-only target.
    compile_targets=TargetGrammar(kind="cuda", arch=r"\d{2,3}", warp_size=32, usage="cuda:<sm>",
                                  examples=("cuda:90", "cuda:80"), default="cuda:90"),
    description="NVIDIA GPUs (CUDA)",
)

SMI = "nvidia-smi"
TOOL_TIMEOUT_S = 15
TELEMETRY_QUERY = "index,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu"
TELEMETRY_COLUMNS = ("index", "sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "util_pct")

# Wording of errors after which the device context is dead (CUDA "sticky" errors),
# the kernel itself is wrong, or the operator cannot run at all (out of memory): a
# fallback latency would report a broken kernel as a measurement. Matched as
# lower-case substrings of "<ExcType>: <message>".
# "device-side assert triggered" is matched whole: torch appends "Compile with
# `TORCH_USE_CUDA_DSA` to enable device-side assertions." to every CUDA error, so a
# looser "device-side assert" would make each capture refusal fatal.
FATAL_MARKERS = (
    "illegal memory access",
    "cudaerrorillegaladdress",
    "an illegal instruction",
    "misaligned address",
    "device-side assert triggered",
    "unspecified launch failure",
    "uncorrectable ecc",
    "out of memory",
)
# No poisoning wording for CUDA. Measured on an H200 with torch 2.11: a refused
# capture (.item(), synchronize, nonzero, unique inside torch.cuda.graph) raises
# "operation failed due to a previous error during capture" (its __context__ says
# "operation not permitted when stream is capturing"), and the very next kernel on
# the same context runs fine -- the capture is discarded, the context survives.
# Such errors are recoverable, which is the host's default when we answer None.


def _clean(value: str) -> str:
    """nvidia-smi writes "[N/A]" or "[Not Supported]" where a sensor has no value."""
    value = value.strip()
    return "" if value.startswith("[") or value.upper() == "N/A" else value


@hookimpl
def zl_backends() -> list[Backend]:
    return [BACKEND]


@hookimpl
@answers_for(BACKEND)
def zl_enumerate_devices(backend: Backend) -> list[str] | None:
    out = run_tool([SMI, "--query-gpu=index", "--format=csv,noheader"], TOOL_TIMEOUT_S)
    if out is None:
        return None
    indices = [line.strip() for line in out.splitlines() if line.strip().isdigit()]
    return indices or None


@hookimpl
@answers_for(BACKEND)
def zl_device_identity(backend: Backend, device: str | None) -> dict[str, str] | None:
    if device is None:
        # nvidia-smi ignores CUDA_VISIBLE_DEVICES; its -i takes the mask's first
        # entry as is (an index or a GPU-... UUID both work there).
        visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")]
        device = visible[0] if visible and visible[0] else "0"
    out = run_tool([SMI, "--query-gpu=name,uuid,driver_version", "--format=csv,noheader", "-i", str(device)],
                   TOOL_TIMEOUT_S)
    if not out or not out.strip():
        return None
    fields = [f.strip() for f in out.strip().splitlines()[0].split(",")]
    if len(fields) != 3:
        return None
    name, uuid, driver = (_clean(f) for f in fields)
    return {"device_name": name, "device_uuid": uuid, "driver_version": driver}


#: nvidia-smi's list of compute processes, every GPU's, each named by its GPU's UUID.
APPS_QUERY = "--query-compute-apps=gpu_uuid,pid,process_name,used_memory"


@hookimpl
@answers_for(BACKEND)
def zl_device_processes(backend: Backend, device: str | None) -> list[dict[str, str]] | None:
    # The list names GPUs by UUID only: the device's UUID picks its rows.
    uuid = (zl_device_identity(backend, device) or {}).get("device_uuid")
    out = run_tool([SMI, APPS_QUERY, "--format=csv,noheader,nounits"], TOOL_TIMEOUT_S) if uuid else None
    if out is None:
        return None
    found = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 4 and fields[0] == uuid and fields[1].isdigit():
            found.append({"pid": fields[1], "name": fields[2], "used_mib": _clean(fields[3])})
    return found


@hookimpl
@answers_for(BACKEND)
def zl_classify_capture_error(backend: Backend, exc: BaseException) -> str | None:
    return classify_by_markers(exc, FATAL_MARKERS)


@hookimpl
@answers_for(BACKEND)
def zl_telemetry_command(backend: Backend, device: str | None) -> list[str] | None:
    argv = [SMI, f"--query-gpu={TELEMETRY_QUERY}", "--format=csv,noheader,nounits"]
    return [*argv, "-i", str(device)] if device not in (None, "") else argv


#: NVML in this process, where pynvml is installed (the ``nvml`` extra); else nvidia-smi.
NVML = NvmlSampler()


@hookimpl
@answers_for(BACKEND)
def zl_sample_telemetry(backend: Backend, device: str | None) -> TelemetryReading | None:
    return NVML.read(device)


@hookimpl
@answers_for(BACKEND)
def zl_parse_telemetry(backend: Backend, raw: str) -> list[dict[str, str]] | None:
    rows = []
    for line in raw.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(TELEMETRY_COLUMNS) or not fields[0].isdigit():
            continue  # "No devices were found", warnings, blank lines
        rows.append(dict(zip(TELEMETRY_COLUMNS, (_clean(f) for f in fields), strict=True)))
    return rows
