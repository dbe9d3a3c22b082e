"""Throttle and drift flags: join each cell to the telemetry samples of its time window.

Telemetry never refuses a comparison; it flags. A cell is flagged when, while the
device was busy during the cell, its SM clock fell below a fraction of the campaign's
median busy clock, or its temperature or power rose past a bound. Flags are short
strings without commas or tabs so they fit the ``flags`` column of status.tsv.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import attrs

TELEMETRY_COLUMNS = ("timestamp", "index", "sm_clock_mhz", "mem_clock_mhz", "temp_c",
                     "power_w", "util_pct")
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@attrs.frozen(kw_only=True)
class CellWindow:
    label: str  # e.g. the cell path relative to the campaign
    device: str | None  # device index the cell ran on ("3", "cuda:3", "0,1"); None = any
    start: float  # epoch seconds
    end: float


def _float_or_none(text: object) -> float | None:
    # Samplers print "[N/A]", "N/A", "", or a value with a unit ("1980 MHz").
    if text is None:
        return None
    m = _NUMBER.match(str(text))
    if not m:
        return None
    v = float(m.group(1))
    return v if math.isfinite(v) else None


def parse_timestamp(text: object) -> float | None:
    """Epoch seconds from an epoch number or an ISO-8601 time (naive = UTC); None if unparsable."""
    if text is None:
        return None
    s = str(text).strip()
    if not s:
        return None
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except ValueError:
        pass
    s = s.replace("/", "-")  # nvidia-smi style 2026/12/02 11:38:46.123
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"  # fromisoformat accepts "Z" only from Python 3.11
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


@attrs.frozen(kw_only=True)
class TelemetrySample:
    timestamp: float  # epoch seconds
    index: str  # device index as the sampler printed it
    sm_clock_mhz: float | None
    mem_clock_mhz: float | None
    temp_c: float | None
    power_w: float | None
    util_pct: float | None

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> TelemetrySample | None:
        """One telemetry.tsv row; None when its timestamp or device index is unusable."""
        ts = parse_timestamp(row.get("timestamp"))
        index = (row.get("index") or "").strip()
        if ts is None or not index:
            return None
        return cls(timestamp=ts, index=index,
                   sm_clock_mhz=_float_or_none(row.get("sm_clock_mhz")),
                   mem_clock_mhz=_float_or_none(row.get("mem_clock_mhz")),
                   temp_c=_float_or_none(row.get("temp_c")),
                   power_w=_float_or_none(row.get("power_w")),
                   util_pct=_float_or_none(row.get("util_pct")))

    @property
    def busy(self) -> bool:
        # Unknown utilisation counts as busy: a sampler without it still gets checked.
        return self.util_pct is None or self.util_pct > 0


def read_telemetry_tsv(path: str | Path) -> list[TelemetrySample]:
    """Samples of a telemetry.tsv, sorted by time.

    A missing file gives []. The last line is dropped when the file does not end in a
    newline (a sampler killed mid-write could leave "19" of "1980"); rows with the wrong
    number of fields, repeated headers and unparsable rows are skipped.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return []
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]  # unterminated, possibly truncated
    lines = [ln.rstrip("\r") for ln in lines if ln.strip()]
    if not lines:
        return []
    first = lines[0].split("\t")
    if "timestamp" in first:
        header, body = first, lines[1:]
    else:
        header, body = list(TELEMETRY_COLUMNS), lines
    out = []
    for ln in body:
        fields = ln.split("\t")
        if len(fields) != len(header):
            continue
        sample = TelemetrySample.from_row(dict(zip(header, fields)))
        if sample is not None:
            out.append(sample)
    out.sort(key=lambda s: s.timestamp)
    return out


@attrs.frozen(kw_only=True)
class CellFlag:
    label: str
    flags: tuple[str, ...]  # e.g. ("sm_clock_low(1200<0.75*1980)",); () = clean

    @property
    def text(self) -> str:
        """Comma list for the ``flags`` column of status.tsv."""
        return ",".join(self.flags)


def _norm_index(text: str) -> str:
    t = text.strip()
    t = t.rsplit(":", 1)[-1].strip()  # "cuda:3" -> "3"
    return str(int(t)) if t.isdigit() else t


def _devices(device: str | None) -> set[str] | None:
    if device is None or not str(device).strip():
        return None
    return {_norm_index(d) for d in str(device).split(",") if d.strip()}


def _median(values: Sequence[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2.0


def _largest_rise(values: Iterable[float]) -> float:
    """Largest increase, later value minus earlier value, in time order (0 if none)."""
    best, low = 0.0, math.inf
    for v in values:
        best = max(best, v - low)
        low = min(low, v)
    return best


def _largest_rise_pct(values: Iterable[float]) -> float:
    best, low = 0.0, math.inf
    for v in values:
        if low > 0 and math.isfinite(low):
            best = max(best, (v - low) / low * 100.0)
        if v > 0:
            low = min(low, v)
    return best


def campaign_median_clock(samples: Sequence[TelemetrySample]) -> float | None:
    """Median SM clock over samples taken while busy (util > 0); all samples if none were."""
    busy = [s.sm_clock_mhz for s in samples
            if s.sm_clock_mhz is not None and s.util_pct is not None and s.util_pct > 0]
    if not busy:
        busy = [s.sm_clock_mhz for s in samples if s.sm_clock_mhz is not None]
    return _median(busy) if busy else None


def flag_cells(windows: Sequence[CellWindow], samples: Sequence[TelemetrySample], *,
               clock_fraction: float = 0.75, max_temp_rise_c: float = 10.0,
               max_power_rise_pct: float = 25.0,
               stamp_resolution_s: float = 1.0) -> list[CellFlag]:
    """One CellFlag per window, in the order given.

    A sample belongs to a window when it was taken on the window's device (any device
    when unknown) and its time lies in ``(start - stamp_resolution_s, end]``: the
    sampler stamps whole seconds, rounded down. Only busy samples (util > 0 or unknown)
    are judged, because a cell spends its first seconds compiling with the device idle
    and idle clocks and power are low by design. Flags:

    - ``sm_clock_low(<min><<fraction>*<median>)``: the lowest busy SM clock in the window
      is below ``clock_fraction`` times the campaign's median busy clock;
    - ``temp_rise(+<d>C><bound>C)``: temperature rose by more than the bound;
    - ``power_rise(+<d>%><bound>%)``: power rose by more than the bound (power follows
      load, so this is a weaker hint than the clock flag);
    - ``no_samples`` / ``no_busy_samples``: a note that nothing could be judged.
    """
    ordered = sorted(samples, key=lambda s: s.timestamp)
    times = [s.timestamp for s in ordered]
    median_clock = campaign_median_clock(ordered)
    out = []
    for w in windows:
        devices = _devices(w.device)
        lo = bisect.bisect_right(times, w.start - stamp_resolution_s)
        hi = bisect.bisect_right(times, w.end)
        mine = [s for s in ordered[lo:hi]
                if devices is None or _norm_index(s.index) in devices]
        flags: list[str] = []
        busy = [s for s in mine if s.busy]
        if not mine:
            flags.append("no_samples")
        elif not busy:
            flags.append("no_busy_samples")
        else:
            clocks = [s.sm_clock_mhz for s in busy if s.sm_clock_mhz is not None]
            if clocks and median_clock and min(clocks) < clock_fraction * median_clock:
                flags.append(f"sm_clock_low({min(clocks):g}<{clock_fraction:g}*{median_clock:g})")
            rise = _largest_rise(s.temp_c for s in busy if s.temp_c is not None)
            if rise > max_temp_rise_c:
                flags.append(f"temp_rise(+{rise:g}C>{max_temp_rise_c:g}C)")
            prise = _largest_rise_pct(s.power_w for s in busy if s.power_w is not None)
            if prise > max_power_rise_pct:
                flags.append(f"power_rise(+{prise:.0f}%>{max_power_rise_pct:g}%)")
        out.append(CellFlag(label=w.label, flags=tuple(flags)))
    return out
