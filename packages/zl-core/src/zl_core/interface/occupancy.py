"""When a cell held its device for timing: wall-clock intervals, small and comparable.

A cell's clock (:class:`zl_core.interface.phases.PhaseClock`) notes each stretch in which
the innermost open phase is one that times on the device (its timing loops, the autotune
sweep's benchmarks; :data:`zl_core.interface.phases.DEVICE_PHASES`): a compilation that a
listener reports afterwards is cut out of the stretch it ran in, so a stretch is device
work, not the compiler's. The stretches are measured on the process's monotonic clock
(``time.perf_counter``: exact durations, never stepped) and written in epoch seconds, each
``epoch = started_epoch + (t - origin)``, where ``started_epoch`` (``time.time``) and
``origin`` (the monotonic clock) are read together once, when the clock starts. So
intervals of different processes of one host compare: their error against each other is
what the system clock was adjusted by between the two processes' starts (NTP slews by
parts per million), never a step inside a cell.

The record is kept small: intervals closer than :data:`MERGE_GAP_S` are merged, and beyond
:data:`MAX_INTERVALS` the two nearest are merged, the gap they bridged added to
``bridged_s`` (the most the intervals overstate the device's busy time). ``seconds`` is
the exact sum of the stretches, before any bridging.

One spelling, two records: the cell writes :data:`KEY` into its ``cell_phases``
(:func:`cell_part`), the orchestrator places it in the cell's window (:func:`assembled`)
under :data:`KEY` of ``phases``. A cell without it (an older zl, a provider that keeps no
such clock, a cell whose timing hooks did not go in) reads as unknown, never as idle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

KEY = "device_busy"
SCHEMA = 1
#: Stretches closer than this are one interval (a row's reference and operator calls).
MERGE_GAP_S = 0.001
#: At most this many intervals per cell; beyond, the nearest two are merged.
MAX_INTERVALS = 64
DIGITS = 4  # epoch seconds to 0.1 ms

Span = tuple[float, float]


@attrs.define
class Intervals:
    """Closed stretches in one clock's time, merged as they come and bounded in number."""

    spans: list[list[float]] = attrs.field(factory=list)
    seconds: float = 0.0  # the stretches' exact sum
    bridged_s: float = 0.0  # gaps merged away to keep the count bounded

    def add(self, start: float, end: float) -> None:
        if not end > start:
            return
        self.seconds += end - start
        if self.spans and start - self.spans[-1][1] <= MERGE_GAP_S:
            gap = max(0.0, start - self.spans[-1][1])
            self.spans[-1][1] = max(self.spans[-1][1], end)
            self.bridged_s += gap
            return
        self.spans.append([start, end])
        if len(self.spans) > MAX_INTERVALS:
            gaps = [self.spans[i + 1][0] - self.spans[i][1] for i in range(len(self.spans) - 1)]
            i = min(range(len(gaps)), key=gaps.__getitem__)
            self.bridged_s += max(0.0, gaps[i])
            self.spans[i][1] = self.spans[i + 1][1]
            del self.spans[i + 1]

    def to_json(self, to_epoch: Callable[[float], float], *, open_since: float | None = None,
                now: float | None = None) -> dict:
        """The cell's part (:data:`KEY` of ``cell_phases``); a stretch still open counts up to ``now``."""
        spans = Intervals(spans=[list(s) for s in self.spans], seconds=self.seconds,
                          bridged_s=self.bridged_s)
        if open_since is not None and now is not None:
            spans.add(open_since, now)
        return {"schema": SCHEMA,
                "intervals": [[round(to_epoch(s), DIGITS), round(to_epoch(e), DIGITS)] for s, e in spans.spans],
                "seconds": round(spans.seconds, DIGITS), "bridged_s": round(spans.bridged_s, DIGITS)}


def _spans(value: object) -> list[Span] | None:
    if not isinstance(value, list):
        return None
    out: list[Span] = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in item)
                or not item[1] >= item[0]):
            return None
        out.append((float(item[0]), float(item[1])))
    return out


def assembled(cell: Mapping | None, *, window: Span, spawned: bool, final: bool,
              written: float | None) -> dict:
    """The cell's part placed in its window (:data:`KEY` of ``phases``):
    ``{"schema", "window", "intervals", "seconds", "bridged_s", "known_until"}``.

    ``intervals`` is None when the cell kept no such record (unknown). A process never
    spawned (a failed preflight) held the device for nothing: ``[]``. A cell that did not
    get to its end (killed, timed out) is known up to its last record, ``known_until``
    (epoch), and unknown after it; None when the whole window is known."""
    own = cell.get(KEY) if isinstance(cell, Mapping) else None
    spans = _spans(own.get("intervals")) if isinstance(own, Mapping) else None
    base = {"schema": SCHEMA, "window": [round(window[0], DIGITS), round(window[1], DIGITS)]}
    if not spawned:
        return {**base, "intervals": [], "seconds": 0.0, "bridged_s": 0.0, "known_until": None}
    if spans is None or not isinstance(own, Mapping) or (not final and written is None):
        return {**base, "intervals": None, "seconds": None, "bridged_s": None, "known_until": None}
    return {**base, "intervals": [list(s) for s in spans], "seconds": _number(own.get("seconds")),
            "bridged_s": _number(own.get("bridged_s")),
            "known_until": None if final or written is None else round(written, DIGITS)}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@attrs.frozen
class CellBusy:
    """One cell's :data:`KEY` as read back: what is known, and what may have been busy."""

    window: Span | None
    known: tuple[Span, ...]  # intervals the cell recorded
    #: Stretches of its window nobody recorded (the whole window when the cell kept no record).
    unknown: tuple[Span, ...]
    complete: bool  # the whole window is known
    bridged_s: float = 0.0


def read(record: Mapping | None, *, window: Span | None = None) -> CellBusy:
    """A ``phases`` record's :data:`KEY`; ``window`` (the status row's start and end) stands
    in for a cell whose record has none. Without intervals the window is unknown."""
    own = record.get(KEY) if isinstance(record, Mapping) else None
    own = own if isinstance(own, Mapping) else {}
    recorded = _spans([own.get("window")])
    win = recorded[0] if recorded else window
    intervals = _spans(own.get("intervals"))
    if intervals is None:
        return CellBusy(window=win, known=(), unknown=(win,) if win else (), complete=False)
    until = _number(own.get("known_until"))
    unknown = ((until, win[1]),) if until is not None and win is not None and win[1] > until else ()
    return CellBusy(window=win, known=tuple(intervals), unknown=unknown, complete=until is None,
                    bridged_s=_number(own.get("bridged_s")) or 0.0)


def union(spans: Iterable[Span]) -> list[Span]:
    """The spans merged into disjoint ones, in order."""
    out: list[list[float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def measure(spans: Sequence[Span] | Iterable[Span]) -> float:
    """Seconds covered by the spans, overlaps counted once."""
    return sum((e - s for s, e in union(spans)), 0.0)
