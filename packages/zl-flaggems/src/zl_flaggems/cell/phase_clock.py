"""The cell process's phase clock, shared by zl's plugins (one process, one clock).

The clock starts when this module is first imported: the phases plugin is the first
``-p`` module of a cell, so everything from there to the start of collection counts
as interpreter start and imports (the orchestrator adds the time before it). The
names and the record are :mod:`zl_core.interface.phases`'; which of them this process could
measure is :data:`MEASURED`: a phase never hooked stays unknown in the record.
"""

from __future__ import annotations

from typing import Any

from zl_core.cells import liveness
from zl_core.interface import phases

from zl_flaggems.cell import cellenv

CLOCK = phases.PhaseClock()
CLOCK.enter(phases.START)
liveness.arm()  # from the first plugin on, a stalled cell can give its Python stacks
#: Phases this process measures; the plugins add theirs as their hooks go in.
MEASURED: set[str] = {phases.START, phases.COLLECTION, phases.IR_DUMP, phases.TEARDOWN}


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
    record = phases.cell_record(known, started_epoch=CLOCK.started_epoch, final=final)
    cellenv.merge_identity("phases", {phases.CELL_KEY: record})
