"""Where a cell's time goes: the phase names, the clock a cell process keeps, and the
record the orchestrator folds into the cell's identity.

Two writers, one record. Inside the cell, a provider's code keeps a :class:`PhaseClock`
and writes :func:`cell_record` under :data:`CELL_KEY`; it knows what only the process
can see (collection, the autotune sweep, compilation, timing loops, the IR dump). The
orchestrator knows the wall time around the process (preflight, the interpreter's
start before the cell's first line, the exit after its last), and :func:`assemble`
combines both under :data:`KEY`. A phase the cell could not separate stays ``None``
(unknown), never a guess; ``other`` is the cell's wall time minus every known phase,
so the known phases and ``other`` always add up to ``elapsed_s``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager

import attrs

from zl_core.interface import occupancy, timing_gate

PREFLIGHT = "preflight"  # the provider's checks, in the orchestrator, before the process
START = "start_imports"  # interpreter start, imports (the test modules' included)
COLLECTION = "collection"
AUTOTUNE = "autotune_sweep"
COMPILATION = "compilation"
REFERENCE = "reference_timing"  # timing the reference (torch) implementation
OPERATOR = "operator_timing"  # timing the operator under test
IR_DUMP = "ir_dump"
TIMING = "timing_call"  # a timing call, until its row says whether it timed the reference
TEARDOWN = "teardown"  # the end of the session to the process's exit
OTHER = "other"  # everything else: test setup, inputs, correctness checks, printing

#: Every phase, in the order a cell goes through them (``other`` last, derived).
PHASES = (PREFLIGHT, START, COLLECTION, AUTOTUNE, COMPILATION, REFERENCE, OPERATOR, IR_DUMP,
          TEARDOWN)
#: Phases only the cell process can measure.
CELL_PHASES = (START, COLLECTION, AUTOTUNE, COMPILATION, REFERENCE, OPERATOR, IR_DUMP, TEARDOWN)
#: The phases in which a cell holds its device for timing (:mod:`zl_core.interface.occupancy`).
DEVICE_PHASES = frozenset({AUTOTUNE, REFERENCE, OPERATOR, TIMING})
#: What each phase is called where people read it (the report, ``zl screen --plan``).
LABELS = {
    PREFLIGHT: "preflight checks", START: "interpreter start and imports",
    COLLECTION: "collection", AUTOTUNE: "autotune sweep", COMPILATION: "compilation",
    REFERENCE: "reference timing", OPERATOR: "operator timing", IR_DUMP: "IR dump",
    TEARDOWN: "teardown", OTHER: "other (not separated)",
}
#: The identity key the cell writes, and the one the orchestrator derives from it.
CELL_KEY = "cell_phases"
KEY = "phases"
SCHEMA = 1


@attrs.define
class Span:
    """A closed phase: its own seconds (nested phases not included)."""

    name: str
    seconds: float = 0.0


@attrs.define
class PhaseClock:
    """Exclusive time per phase: a phase entered inside another is not counted twice.

    ``credit`` moves time that already passed inside the current phase to another
    (a compilation whose duration its listener reports after it ended). Only the
    thread that made the clock moves it: work done on other threads (the compile pool's
    workers) overlaps, and the owner's own phase around it (its wait for the pool)
    already holds its wall time; summed into the phases, 215 s of compiles done in 80 s
    on eight threads would make them add up to more than the cell's wall time. Such
    credits are kept apart, in ``off_thread`` (seconds of work, not of wall time).

    While the innermost open phase is one of ``device`` the clock also notes when
    (:mod:`zl_core.interface.occupancy`, ``busy``); the owner's credit of another phase
    inside such a stretch (a compilation reported after it ended) is cut out of it.

    With a ``gate`` (a pipelined cell, :mod:`zl_core.interface.timing_gate`), entering a
    device phase first waits for the device's gate, outside every stretch (the wait is no
    device time), unless :meth:`hold_device` took it earlier; the cell keeps it until it exits.
    """

    now: Callable[[], float] = time.perf_counter
    seconds: dict[str, float] = attrs.field(factory=dict)
    #: Epoch seconds at ``now()``'s origin; read with it when not given (see __attrs_post_init__).
    started_epoch: float = attrs.field(default=None)
    off_thread: dict[str, float] = attrs.field(factory=dict)
    device: frozenset[str] = frozenset()
    busy: occupancy.Intervals = attrs.field(factory=occupancy.Intervals)
    gate: timing_gate.TimingGate | None = None
    _owner: int = attrs.field(factory=threading.get_ident)
    _stack: list[list] = attrs.field(factory=list)  # [name, entered, nested seconds]
    _origin: float = attrs.field(init=False, default=0.0)  # ``now()`` at ``started_epoch``
    _busy_since: float | None = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        if self.started_epoch is not None:
            self._origin = self.now()
            return
        # The two clocks are read back to back; on a busy host the process can be put off
        # between the reads, which would shift every interval it writes (against other
        # processes' and the timing gate's epoch times): keep the tightest of a few pairs.
        best = None
        for _ in range(5):
            before, epoch, after = self.now(), time.time(), self.now()
            if best is None or after - before < best[0]:
                best = (after - before, epoch, (before + after) / 2)
            if after - before < 20e-6:
                break
        assert best is not None
        _, self.started_epoch, self._origin = best

    def enter(self, name: str) -> None:
        if self.gate is not None and name in self.device and threading.get_ident() == self._owner:
            self.gate.enter()  # before the clock reads: the wait is not the device's time
        now = self.now()
        self._stack.append([name, now, 0.0])
        self._on_device(now)

    def leave(self, name: str) -> float:
        """Close ``name`` (and any phase left open inside it); its own seconds."""
        own = 0.0
        now = self.now()
        while self._stack:
            entry, entered, nested = self._stack.pop()
            total = now - entered
            own = max(0.0, total - nested)
            self.seconds[entry] = self.seconds.get(entry, 0.0) + own
            if self._stack:
                self._stack[-1][2] += total
            if entry == name:
                break
        self._on_device(now)
        return own

    def _on_device(self, now: float) -> None:
        """Open or close the device stretch as the innermost phase changes."""
        timing = bool(self._stack) and self._stack[-1][0] in self.device
        if timing and self._busy_since is None:
            self._busy_since = now
        elif not timing and self._busy_since is not None:
            self.busy.add(self._busy_since, now)
            self._busy_since = None

    def hold_device(self) -> None:
        """Take the device's gate now, before the cell's first work on the device (its first
        test's inputs), outside every phase; nothing without a gate or when already held."""
        if self.gate is not None:
            self.gate.enter()

    def release_device(self) -> bool:
        """Give the device's gate back before the process exits (``--gate-release tests``,
        once the cell's last test ended and its device is idle); never inside a device
        phase. True when the gate was held and is given back; a later device phase would
        wait for it again."""
        if self.gate is None or not self.gate.holding or self._busy_since is not None:
            return False
        self.gate.leave()
        return True

    def gate_record(self) -> dict | None:
        """The gate's own record (:data:`timing_gate.KEY`), None for a cell with no gate."""
        return None if self.gate is None else self.gate.record()

    def epoch(self, t: float) -> float:
        """A time of this clock in epoch seconds (:mod:`zl_core.interface.occupancy`)."""
        return self.started_epoch + (t - self._origin)

    def busy_record(self) -> dict:
        """When this clock's device phases held the device, so far (:data:`occupancy.KEY`)."""
        return self.busy.to_json(self.epoch, open_since=self._busy_since, now=self.now())

    def is_open(self, name: str) -> bool:
        return any(entry[0] == name for entry in self._stack)

    @contextmanager
    def phase(self, name: str) -> Iterator[Span]:
        span = Span(name=name)
        self.enter(name)
        try:
            yield span
        finally:
            span.seconds = self.leave(name)

    def credit(self, name: str, seconds: float) -> None:
        seconds = max(0.0, float(seconds))
        if threading.get_ident() != self._owner:
            self.off_thread[name] = self.off_thread.get(name, 0.0) + seconds
            return
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        if self._stack:
            self._stack[-1][2] += seconds
        if self._busy_since is not None and name not in self.device and seconds > 0:
            now = self.now()  # the credited work ran just now, inside the open stretch
            self.busy.add(self._busy_since, max(self._busy_since, now - seconds))
            self._busy_since = now

    def move(self, source: str, target: str, seconds: float) -> None:
        """Reassign closed time (a timing call found, later, to be the reference's)."""
        seconds = min(max(0.0, seconds), self.seconds.get(source, 0.0))
        self.seconds[source] = self.seconds.get(source, 0.0) - seconds
        self.seconds[target] = self.seconds.get(target, 0.0) + seconds


def cell_record(seconds: Mapping[str, float | None], *, started_epoch: float,
                final: bool, device_busy: Mapping | None = None,
                gate: Mapping | None = None) -> dict:
    """What a cell writes under :data:`CELL_KEY`: its phases (``None`` = not separable
    on this path), when its clock started and when this record was written (epoch
    seconds), and whether the cell got to its end (``final``); ``device_busy``
    (:meth:`PhaseClock.busy_record`) where the cell knows when it timed on its device;
    ``gate`` (:meth:`PhaseClock.gate_record`) where it took its device's timing gate."""
    record = {"schema": SCHEMA, "started": round(started_epoch, 4), "written": round(time.time(), 4),
              "final": bool(final),
              "seconds": {p: (None if (value := seconds.get(p)) is None else round(float(value), 4))
                          for p in CELL_PHASES}}
    if device_busy is not None:
        record[occupancy.KEY] = dict(device_busy)
    if gate is not None:
        record[timing_gate.KEY] = dict(gate)
    return record


def assemble(*, wall_s: float, preflight_s: float, spawned: float | None, exited: float | None,
             cell: Mapping | None, window: tuple[float, float] | None = None) -> dict:
    """The cell's phases (:data:`KEY`): the cell's record placed in the orchestrator's
    wall time. Without a final cell record the process's unaccounted time is ``other``.
    With the cell's ``window`` (epoch start and end), when it held its device for timing
    (:func:`zl_core.interface.occupancy.assembled`)."""
    seconds: dict[str, float | None] = {p: None for p in PHASES}
    seconds[PREFLIGHT] = preflight_s
    final = False
    written: float | None = None
    own = cell.get("seconds") if isinstance(cell, Mapping) else None
    if isinstance(own, Mapping) and isinstance(cell, Mapping) and spawned is not None:
        for name in CELL_PHASES:
            value = own.get(name)
            seconds[name] = float(value) if isinstance(value, (int, float)) else None
        started, written = _stamps(cell)
        final = bool(cell.get("final")) and written is not None and exited is not None
        start = seconds[START]
        # exec and imports before the clock count as the start
        seconds[START] = (start + max(0.0, started - spawned)
                          if started is not None and start is not None else None)
        if final and written is not None and exited is not None:
            seconds[TEARDOWN] = (seconds[TEARDOWN] or 0.0) + max(0.0, exited - written)
        else:
            seconds[TEARDOWN] = None  # the process ended (or was killed) after its last record
    rounded = {k: None if v is None else round(v, 3) for k, v in seconds.items()}
    wall = round(float(wall_s), 3)
    known = sum(v for v in rounded.values() if v is not None)
    rounded[OTHER] = round(wall - known, 3)
    out = {"schema": SCHEMA, "wall_s": wall, "complete": final, "seconds": rounded,
           "unknown": [k for k, v in rounded.items() if v is None]}
    if window is not None:
        out[occupancy.KEY] = occupancy.assembled(
            cell if isinstance(own, Mapping) else None, window=window, spawned=spawned is not None,
            final=final, written=written)
    gate = timing_gate.closed(cell.get(timing_gate.KEY) if isinstance(cell, Mapping) else None, exited)
    if gate is not None:
        out[timing_gate.KEY] = gate
    return out


def _stamps(cell: Mapping) -> tuple[float | None, float | None]:
    """When a cell record's clock started and when it was written (epoch seconds)."""
    try:
        return float(cell["started"]), float(cell["written"])
    except (KeyError, TypeError, ValueError):
        return None, None


def campaign_sum(records: Iterable[Mapping | None]) -> dict:
    """Per phase, the seconds summed over a campaign's cells, with how many cells could
    not separate it (``unknown``) and how many carried no phases at all."""
    names = (*PHASES, OTHER)
    total = dict.fromkeys(names, 0.0)
    unknown = dict.fromkeys(names, 0)
    cells = without = 0
    wall = 0.0
    for record in records:
        cells += 1
        seconds = record.get("seconds") if isinstance(record, Mapping) else None
        if not isinstance(record, Mapping) or not isinstance(seconds, Mapping):
            without += 1
            continue
        wall += float(record.get("wall_s") or 0.0)
        for name in names:
            value = seconds.get(name)
            if isinstance(value, (int, float)):
                total[name] += float(value)
            else:
                unknown[name] += 1
    return {"cells": cells, "cells_without_phases": without, "wall_s": round(wall, 3),
            "seconds": {k: round(v, 3) for k, v in total.items()},
            "share": {k: (round(v / wall, 4) if wall > 0 else None) for k, v in total.items()},
            "unknown_cells": {k: v for k, v in unknown.items() if v}}
