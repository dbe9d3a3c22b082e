"""Throttle and drift flags: join each cell to the telemetry samples of its time window.

Telemetry never refuses a comparison; it flags. A cell is flagged when, while the
device was busy during the cell, its SM clock stayed below a fraction of the busy clock
of the other cells of the same operator and side, or its temperature or power moved
away from that of those cells by more than a bound. Flags are short strings without
commas or tabs so they fit the ``flags`` column of status.tsv.

Why "the same operator": load sets clock, power and temperature. On the H200 a GEMM
cell draws 500-650 W and warms the card by 15 C within seconds, from an idle 80 W, so a
rise inside one cell is the workload, not drift (docs/validation/2026-12-02-h200.md:
a within-cell rule flagged every cell of two steady campaigns). The power limit holds
a GEMM's busy clock near 1455 MHz (bmm) where pointwise operators run at 1980, so a
campaign-wide clock reference read every GEMM cell as throttled
(docs/validation/2026-12-03-h200.md). Cells of one operator and side carry the same
load in every round, so they are what a cell is compared with, each by a median over
its window: at one sample a second a cell has only a few busy samples, and which shape
they land on decides their level, while the window's median follows the card's
baseline. A cell alone in its group (a screen's pair, round 1's recording cell) has
nothing to be compared with and is not judged; a throttle there shows only in the
report's telemetry timeline.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import attrs

from zl_core.store.layout import TELEMETRY_TSV_COLUMNS as TELEMETRY_COLUMNS

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@attrs.frozen(kw_only=True)
class CellWindow:
    label: str  # e.g. the cell path relative to the campaign
    device: str | None  # device index the cell ran on ("3", "cuda:3", "0,1"); None = any
    start: float  # epoch seconds
    end: float
    group: str | None = None  # cells with the same load (operator, side); None = its own


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
        sample = TelemetrySample.from_row(dict(zip(header, fields, strict=True)))
        if sample is not None:
            out.append(sample)
    out.sort(key=lambda s: s.timestamp)
    return out


@attrs.frozen(kw_only=True)
class CellFlag:
    label: str
    flags: tuple[str, ...]  # e.g. ("sm_clock_low(900<0.75*1455 op)",); () = clean

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


def load_group(op: str, round_no: object, side: str) -> str:
    """The group of a campaign cell: its operator and side; round 1's side A records
    (autotune sweeps, a different load) and is a group of its own."""
    try:
        first = int(str(round_no).lstrip("r")) == 1
    except ValueError:
        first = False
    return f"{op}/{side}" + ("/record" if first and side == "A" else "")


def _clock_flag(clocks: Sequence[float], reference: float | None,
                fraction: float) -> list[str]:
    """``sm_clock_low`` when two busy clocks (``clocks``, sorted) are below the reference."""
    if len(clocks) < 2 or not reference or clocks[1] >= fraction * reference:
        return []
    return [f"sm_clock_low({clocks[1]:g}<{fraction:g}*{reference:g} op)"]


def flag_cells(windows: Sequence[CellWindow], samples: Sequence[TelemetrySample], *,
               clock_fraction: float = 0.75, max_temp_drift_c: float = 10.0,
               max_power_drift_pct: float = 25.0,
               stamp_resolution_s: float = 1.0) -> list[CellFlag]:
    """One CellFlag per window, in the order given.

    A sample belongs to a window when it was taken on the window's device (any device
    when unknown) and its time lies in ``(start - stamp_resolution_s, end]``: the
    sampler stamps whole seconds, rounded down. The clock is judged on busy samples
    only (util > 0 or unknown): a cell spends its first seconds compiling with the
    device idle, and idle clocks are low by design. Each window is compared with the
    other windows of its ``group`` (a window without one is a group of its own). Flags:

    - ``sm_clock_low(<clock><<fraction>*<reference> op)``: at least two busy samples of
      the window lie below ``clock_fraction`` times the reference, the median over the
      group's other windows of their median busy clock; ``<clock>`` is the second
      lowest. One low sample is not a throttle: it may be the clock ramping, or a short
      cell's only busy sample, caught on a power-limited shape;
    - ``temp_drift(<+-d>C><bound>C)``: the median temperature over the window (idle
      samples included) differs from the median over its group's windows by more than
      the bound;
    - ``power_drift(<+-d>%><bound>%)``: likewise for power, relative to the group's;
    - ``no_samples`` / ``no_busy_samples``: a note that nothing could be judged.

    A window is judged only in a group where another window has samples (busy ones,
    for the clock): a window alone has nothing to be compared with.
    """
    ordered = sorted(samples, key=lambda s: s.timestamp)
    times = [s.timestamp for s in ordered]
    flags_of: list[list[str]] = []
    clocks_of: list[list[float]] = []  # busy SM clocks, sorted
    temp_of: list[float | None] = []
    power_of: list[float | None] = []
    for w in windows:
        devices = _devices(w.device)
        lo = bisect.bisect_right(times, w.start - stamp_resolution_s)
        hi = bisect.bisect_right(times, w.end)
        mine = [s for s in ordered[lo:hi]
                if devices is None or _norm_index(s.index) in devices]
        busy = [s for s in mine if s.busy]
        flags_of.append(["no_samples"] if not mine else ["no_busy_samples"] if not busy else [])
        clocks_of.append(sorted(s.sm_clock_mhz for s in busy if s.sm_clock_mhz is not None))
        temps = [s.temp_c for s in mine if s.temp_c is not None]
        powers = [s.power_w for s in mine if s.power_w is not None and s.power_w > 0]
        temp_of.append(_median(temps) if temps else None)
        power_of.append(_median(powers) if powers else None)

    level = [_median(c) if c else None for c in clocks_of]  # a window's median busy clock
    groups: dict[object, list[int]] = {}
    for i, w in enumerate(windows):
        groups.setdefault(w.group if w.group is not None else ("window", i), []).append(i)
    for members in groups.values():
        temps = [t for t in (temp_of[i] for i in members) if t is not None]
        powers = [p for p in (power_of[i] for i in members) if p is not None]
        temp_ref = _median(temps) if len(temps) >= 2 else None
        power_ref = _median(powers) if len(powers) >= 2 else None
        for i in members:
            flags, temp, power = flags_of[i], temp_of[i], power_of[i]
            # The others only: the rule is one-sided, so in a group of two the slow cell
            # is named, and its own low samples cannot pull its reference down.
            others = [lv for j in members if j != i and (lv := level[j]) is not None]
            flags += _clock_flag(clocks_of[i], _median(others) if others else None,
                                 clock_fraction)
            if temp is not None and temp_ref is not None and abs(temp - temp_ref) > max_temp_drift_c:
                flags.append(f"temp_drift({temp - temp_ref:+g}C>{max_temp_drift_c:g}C)")
            if power is not None and power_ref and \
                    abs(power - power_ref) / power_ref * 100.0 > max_power_drift_pct:
                pct = (power - power_ref) / power_ref * 100.0
                flags.append(f"power_drift({pct:+.0f}%>{max_power_drift_pct:g}%)")
    return [CellFlag(label=w.label, flags=tuple(f)) for w, f in zip(windows, flags_of, strict=True)]
