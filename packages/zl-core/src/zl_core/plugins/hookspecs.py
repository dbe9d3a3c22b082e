"""Every hook of the ``zl`` plugin system, grouped discovery -> devices -> capture ->
telemetry -> compat -> providers.

Behaviour hooks take the backend as the keyword ``backend``; an implementation
answers only for its own backend and returns None for every other one, so a
third-party plugin registered later can extend or override a vendor's answer
without forking it (pluggy calls the last registered implementation first).
Implementations may accept fewer arguments than the spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from zl_core.foundation.markers import hookspec

if TYPE_CHECKING:
    from zl_core.foundation.backend import Backend, TelemetryReading
    from zl_core.interface.provider import Provider

__all__ = [
    "zl_backends",
    "zl_classify_capture_error",
    "zl_compat_plugins",
    "zl_device_identity",
    "zl_device_processes",
    "zl_enumerate_devices",
    "zl_parse_telemetry",
    "zl_providers",
    "zl_sample_telemetry",
    "zl_telemetry_command",
]

# -- discovery ---------------------------------------------------------------


@hookspec
def zl_backends() -> Sequence[Backend]:
    """Register backends.

    Implemented by: each vendor package (zl-backend-cuda, ...), and third parties.

    :return: the :class:`~zl_core.Backend` descriptors this plugin provides.
    """
    raise NotImplementedError  # a spec's body never runs: pluggy calls the implementations


# -- devices -------------------------------------------------------------------


@hookspec(firstresult=True)
def zl_enumerate_devices(backend: Backend, explicit: Sequence[str] | None) -> list[str] | None:
    """List the device indices of ``backend`` by asking the vendor's own tool.

    Implemented by: the vendor package of ``backend``. The host consults the
    visibility variable before calling this, and the torch namespace after it.

    :param backend: the backend asked about; answer None for any other.
    :param explicit: the devices the user named, or None; a tool may restrict its
        query to them. The host refuses named devices missing from the answer.
    :return: device indices as strings, or None when the vendor tool is absent.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zl_device_identity(backend: Backend, device: str | None) -> Mapping[str, str] | None:
    """Describe a device for the run identity (name, driver, serial or uuid).

    Implemented by: the vendor package of ``backend``.

    :param backend: the backend asked about; answer None for any other.
    :param device: the device index, or None for the first visible one.
    :return: a mapping with at least ``device_name``, or None when unknown.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zl_device_processes(backend: Backend, device: str | None) -> Sequence[Mapping[str, str]] | None:
    """List the processes using a device now, as the vendor's tool sees them.

    Implemented by: the vendor package of ``backend``.

    :param backend: the backend asked about; answer None for any other.
    :param device: the device index, or None for the first visible one.
    :return: one mapping per process with ``pid`` and ``name`` (``used_mib`` where the
        tool gives it), an empty list for a device no process uses, or None when the
        tool cannot tell.

    Stops at first non-None result.
    """


# -- graph capture ---------------------------------------------------------------


@hookspec(firstresult=True)
def zl_classify_capture_error(backend: Backend, exc: BaseException) -> str | None:
    """Classify an error raised while capturing or replaying a device graph.

    Implemented by: the vendor package of ``backend``, matching the vendor's own
    error wording (never a generic footer shared by every error).

    :param backend: the backend that raised; answer None for any other.
    :param exc: the exception.
    :return: ``"fatal"`` (the kernel itself is broken: re-raise), ``"poisoned"``
        (the attempt broke the device context: stop the cell), ``"recoverable"``
        (fall back to direct timing), or None when unsure.

    Stops at first non-None result.
    """


# -- telemetry -----------------------------------------------------------------


@hookspec(firstresult=True)
def zl_telemetry_command(backend: Backend, device: str | None) -> list[str] | None:
    """The argv of one telemetry sample from the vendor's management tool.

    Implemented by: the vendor package of ``backend``; a backend whose tool's
    output format is not established declares no sampler (returns None).

    :param backend: the backend asked about; answer None for any other.
    :param device: a device index to pin, or None for every device.
    :return: argv (no shell), or None when this backend has no sampler.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zl_sample_telemetry(backend: Backend, device: str | None) -> TelemetryReading | None:
    """Take one telemetry sample in-process, through a vendor library, without a tool.

    Implemented by: the vendor package of ``backend`` where its library is installed
    (zl-backend-cuda: NVML through pynvml). Asked before ``zl_telemetry_command``; the
    same columns, units and device indices as the tool's.

    :param backend: the backend asked about; answer None for any other.
    :param device: a device index (or the id the visibility variable gave) to sample,
        or None for every device.
    :return: a :class:`~zl_core.foundation.backend.TelemetryReading` with rows; one with
        ``unavailable`` set when the library is installed but cannot sample (zl then
        runs the tool and says why once); or None when there is no library, and zl
        runs the tool quietly.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zl_parse_telemetry(backend: Backend, raw: str) -> list[Mapping[str, str]] | None:
    """Parse one sample's output into rows of the common telemetry columns.

    Implemented by: the vendor package of ``backend``.

    :param backend: the backend asked about; answer None for any other.
    :param raw: the sampler's standard output.
    :return: one mapping per device with the string-valued keys ``index``,
        ``sm_clock_mhz``, ``mem_clock_mhz``, ``temp_c``, ``power_w``,
        ``util_pct`` (empty string where the tool reports nothing), or None.

    Stops at first non-None result.
    """


# -- compatibility -----------------------------------------------------------------


@hookspec
def zl_compat_plugins(backend: Backend) -> Sequence[str]:
    """Pytest plugin modules to load first in a cell of ``backend``.

    Implemented by: the vendor package of ``backend`` (e.g. a module that
    adapts FlagGems' benchmark base to the vendor's timer).

    :param backend: the backend of the cell; return an empty list for any other.
    :return: importable module names, loaded with ``-p`` before zl's own plugins.
    """
    raise NotImplementedError  # a spec's body never runs: pluggy calls the implementations


# -- providers ---------------------------------------------------------------------


@hookspec
def zl_providers() -> Sequence[Provider]:
    """Register benchmark providers (FlagGems, the built-in suite).

    Implemented by: zl-flaggems, and third parties with their own suites.

    :return: :class:`~zl_core.interface.provider.Provider` instances.
    """
    raise NotImplementedError  # a spec's body never runs: pluggy calls the implementations
