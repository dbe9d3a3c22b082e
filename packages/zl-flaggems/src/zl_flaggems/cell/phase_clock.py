"""The cell process's phase clock, shared by zl's plugins (one process, one clock).

The clock starts when this module is first imported: the phases plugin is the first
``-p`` module of a cell, so everything from there to the start of collection counts
as interpreter start and imports (the orchestrator adds the time before it). The
names and the record are :mod:`zl_core.interface.phases`'; which of them this process could
measure is :data:`MEASURED`: a phase never hooked stays unknown in the record. When the
process held its device for timing (:mod:`zl_core.interface.occupancy`) is recorded only
while every way it times is hooked (:data:`DEVICE_HOOKS`); otherwise it is unknown.
"""

from __future__ import annotations

from typing import Any

from zl_core.cells import liveness
from zl_core.interface import phases, timing_gate

from zl_flaggems.cell import cellenv

# A pipelined cell (ZL_TIMING_GATE) waits for its device's gate at its first device phase.
CLOCK = phases.PhaseClock(device=phases.DEVICE_PHASES, gate=timing_gate.TimingGate.from_env())
CLOCK.enter(phases.START)
liveness.arm()  # from the first plugin on, a stalled cell can give its Python stacks
#: Phases this process measures; the plugins add theirs as their hooks go in.
MEASURED: set[str] = {phases.START, phases.COLLECTION, phases.IR_DUMP, phases.TEARDOWN}
#: Each way this process times on its device (the autotune sweep, the benchmark's timing
#: calls) -> whether its hook went in; empty until the plugins say.
DEVICE_HOOKS: dict[str, bool] = {}


def phase(name: str) -> Any:
    """Context manager: the block's own time counts as ``name``."""
    return CLOCK.phase(name)


def progress() -> None:
    """Something happened that the output may not show (zl_core.cells.liveness)."""
    liveness.beat()


def write(*, final: bool) -> None:
    """Merge the record into the cell's identity (no-op outside a zl cell)."""
    known = {name: CLOCK.seconds.get(name, 0.0) if name in MEASURED else None
             for name in phases.CELL_PHASES}
    hooked = bool(DEVICE_HOOKS) and all(DEVICE_HOOKS.values())
    record = phases.cell_record(known, started_epoch=CLOCK.started_epoch, final=final,
                                device_busy=CLOCK.busy_record() if hooked else None,
                                gate=CLOCK.gate_record())
    cellenv.merge_identity("phases", {phases.CELL_KEY: record})
