"""Device telemetry through a backend's sampler: one sample, the same columns everywhere.

Telemetry is evidence, never a gate: every failure becomes a reason string, and the
caller decides whether to print it. ``zl telemetry`` and the campaign sampler both
build on :func:`take_sample`.

A backend may sample in-process, through a vendor library (``zl_sample_telemetry``,
e.g. NVML); where it has none, or its library cannot sample, the vendor's tool runs
(``zl_telemetry_command``), and a library that could not sample is named once by the
caller (:attr:`Sample.passed_over`).
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence

import attrs

from zl_core.foundation import stamps
from zl_core.foundation.backend import Backend, TelemetryReading
from zl_core.plugins.host import TELEMETRY_COLUMNS, PluginHost

COLUMNS = ("timestamp", *TELEMETRY_COLUMNS)
HEADER = "\t".join(COLUMNS)
DEFAULT_TIMEOUT_S = 10.0


def utc_timestamp(now: _dt.datetime | None = None) -> str:
    """zl's UTC timestamp (:mod:`zl_core.foundation.stamps`) of ``now`` (a datetime; now when None)."""
    return stamps.utc_stamp(None if now is None else now.timestamp())


def sampler_device(backend: Backend, device: str | None,
                   environ: Mapping[str, str] | None = None) -> str | None:
    """The device to pin the sampler to: ``device`` if given, else the backend's
    visibility variable when it names exactly one device. A list of devices gives
    None -- sample them all rather than silently pick the first."""
    if device not in (None, ""):
        return str(device)
    environ = os.environ if environ is None else environ
    for key in backend.visibility_env_keys:
        listed = [d.strip() for d in environ.get(key, "").split(",") if d.strip()]
        if listed:
            return listed[0] if len(listed) == 1 else None
    return None


def _first_line(text: str, limit: int = 200) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


@attrs.frozen(kw_only=True)
class Sample:
    """One sample: its rows (or why there are none), what took it, and what was passed over."""

    rows: list = attrs.field(factory=list)  # one dict per device, TELEMETRY_COLUMNS
    reason: str = ""  # why there are no rows
    sampler: str = ""  # what took (or tried to take) it: "NVML (...)", "nvidia-smi"
    #: Why the backend's in-process sampler did not take it ("" when it did, or has none).
    passed_over: str = ""


def take_sample(host: PluginHost, backend: Backend, device: str | None,
                timeout: float = DEFAULT_TIMEOUT_S) -> Sample:
    """One sample through the backend's in-process sampler, else through its tool."""
    reading = host.sample_telemetry(backend, device)
    if reading is not None and reading.rows:
        return Sample(rows=list(reading.rows), sampler=reading.sampler)
    argv = host.telemetry_command(backend, device)
    rows, reason = _by_command(host, backend, argv, timeout)
    return Sample(rows=rows, reason=reason, sampler=argv[0] if argv else "",
                  passed_over=passed_over(reading, argv))


def passed_over(reading: TelemetryReading | None, argv: Sequence[str] | None) -> str:
    """Why an in-process reading without rows was passed over, and for what ("": none)."""
    if reading is None or reading.rows:
        return ""
    return (f"{reading.sampler} cannot sample ({reading.unavailable or 'it read no device'}); "
            + (f"sampling with {argv[0]} instead" if argv else "no other sampler"))


def sample_once(host: PluginHost, backend: Backend, device: str | None,
                timeout: float = DEFAULT_TIMEOUT_S) -> tuple[list[dict[str, str]], str]:
    """Take one sample (:func:`take_sample`).

    :return: ``(rows, "")`` with one row per device in :data:`TELEMETRY_COLUMNS`
        (values are strings, empty where the sampler reports nothing), or
        ``([], reason)`` when there is no sampler, it is not installed, fails,
        hangs, or prints nothing the backend's parser understands.
    """
    sample = take_sample(host, backend, device, timeout)
    return sample.rows, sample.reason


def _by_command(host: PluginHost, backend: Backend, argv: list[str] | None,
                timeout: float) -> tuple[list[dict[str, str]], str]:
    """Run the backend's tool once and parse what it printed."""
    if not argv:
        return [], f"backend {backend.name} declares no telemetry sampler"
    tool = argv[0]
    if shutil.which(tool) is None:
        return [], f"telemetry sampler {tool!r} is not on PATH"
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return [], f"telemetry sampler {tool} gave no answer within {timeout:g}s"
    except OSError as exc:
        return [], f"telemetry sampler {tool} could not start: {exc}"
    if proc.returncode != 0:
        detail = _first_line(proc.stderr) or _first_line(proc.stdout) or "no output"
        return [], f"telemetry sampler {' '.join(argv)} exited {proc.returncode}: {detail}"
    seen_problems = set(host.problems)
    try:
        rows = host.parse_telemetry(backend, proc.stdout)
    except Exception as exc:  # noqa: BLE001 -- a broken parser must not take a campaign down
        return [], f"the {backend.name} telemetry parser failed: {type(exc).__name__}: {exc}"
    failed = [p for p in host.problems if p not in seen_problems and "zl_parse_telemetry" in p]
    if not rows and failed:  # the host isolated a parser that raised: say which
        return [], f"the {backend.name} telemetry parser failed: {failed[0]}"
    if not rows:
        seen = _first_line(proc.stdout) or "nothing"
        return [], (f"telemetry sampler {tool} printed nothing the {backend.name} parser "
                    f"understands (first line: {seen!r})")
    return rows, ""


def format_rows(rows: Sequence[Mapping[str, str]], timestamp: str) -> list[str]:
    """TSV lines (no header) for one sample, all rows stamped with ``timestamp``."""
    lines = []
    for row in rows:
        values = [timestamp, *(str(row.get(col, "")) for col in TELEMETRY_COLUMNS)]
        lines.append("\t".join(v.replace("\t", " ").replace("\n", " ") for v in values))
    return lines
