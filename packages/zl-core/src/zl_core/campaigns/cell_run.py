"""Run one cell of a task: the cell itself, its report to the sink, its IR summary."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from zl_core.cells import sweep_shards
from zl_core.cells.cell import CellOutcome
from zl_core.decisions.ir_verdict import STALLED, TIMEOUT, SideResult
from zl_core.foundation.errors import PreflightError
from zl_core.interface.provider import CellRequest
from zl_core.interface.ttgir_layout import IrSummary, summarize
from zl_core.store.layout import CellLayout, op_dir_of

from .attempts import run_with_retries
from .executor import Lane, TaskRuntime
from .kept_cells import OperatorMoved, check_kept_here, kept_outcome, set_aside_moved

T = TypeVar("T")
R = TypeVar("R")
EMPTY_IR = IrSummary(fingerprint=None, files=0, kernels=0, convert_layouts=0)


#: The card behind (host, backend, device) for this process: asked of the vendor's tool
#: once, not before every cell (a card cannot change under a running process).
_CARDS: dict[tuple[int, str, str], str | None] = {}


def card_uuid(host, backend, device: str | None) -> str | None:
    """The UUID the vendor's tool gives the card, None where it gives none."""
    key = (id(host), backend.name, str(device))
    if key not in _CARDS:
        _CARDS[key] = host.device_identity(backend, device).get("device_uuid") or None
    return _CARDS[key]


def run_side(runtime: TaskRuntime, suite: str, request: CellRequest, *, round_no: int,
             switch_value: str) -> SideResult:
    """Run ``request``'s cell, report it to the runtime's sink, and summarise its IR.

    A preflight refusal is a finished cell too (rc 3, an empty window stamped when
    refused), so status.tsv lists every cell the plan asked for. A cell that finished
    before (a resumed campaign) is kept, not rerun; a crashed one is retried
    (:mod:`.attempts`). A cell to run on another card than the operator's kept cells
    raises :class:`~.kept_cells.OperatorMoved` (see :func:`whole_on_one_card`).
    """
    provider = runtime.host.get_provider(suite)
    op, side = request.op.op, request.side
    kept = kept_outcome(request.out_dir)
    if kept is not None:  # a resumed campaign: finished before, its status row is written
        runtime.sink.cell_skipped(op=op, round_no=round_no, side=side,
                                  why=f"finished before, kept (rc={kept.rc})")
        return SideResult(outcome=kept, ir=summarize(CellLayout(kept.cell_dir).ttgir))
    check_kept_here(op_dir_of(request.out_dir), request.device,
                    lambda: card_uuid(runtime.host, request.backend, request.device))
    runtime.sink.cell_started(op=op, round_no=round_no, side=side, switch_value=switch_value)
    try:
        outcome = execute(runtime, provider, request)
    except PreflightError as exc:
        return refused(runtime, request, exc, round_no=round_no, switch_value=switch_value)
    return finished(runtime, request, outcome, round_no=round_no, switch_value=switch_value)


def execute(runtime: TaskRuntime, provider, request: CellRequest) -> CellOutcome:
    """The cell run, retried when it crashed, its sweep sharded when asked; raises
    PreflightError when the provider refused it before it started."""
    if sweep_shards.wanted(request):
        return sweep_shards.run_sharded(
            runtime.host, provider, request, say=runtime.sink.line,
            run=lambda req: run_with_retries(runtime.host, provider, req, say=runtime.sink.line))
    return run_with_retries(runtime.host, provider, request, say=runtime.sink.line)


def refused(runtime: TaskRuntime, request: CellRequest, exc: PreflightError, *, round_no: int,
            switch_value: str) -> SideResult:
    """A cell its provider refused before it ran: a finished cell all the same (rc 3, an
    empty window stamped when refused), so status.tsv lists every cell the plan asked for."""
    now = time.time()
    outcome = CellOutcome(cell_dir=Path(request.out_dir), rc=exc.exit_code, timed_out=False,
                          elapsed_s=0.0, start=now, end=now, markers={}, success_rows=0,
                          failed_rows=0, preflight=str(exc))
    runtime.sink.cell_finished(op=request.op.op, round_no=round_no, side=request.side,
                               switch_value=switch_value, outcome=outcome, summary=str(exc))
    return SideResult(outcome=outcome, ir=EMPTY_IR, preflight=str(exc))


def finished(runtime: TaskRuntime, request: CellRequest, outcome: CellOutcome, *, round_no: int,
             switch_value: str) -> SideResult:
    """A cell that ran, reported to the sink with its IR summary."""
    ir = summarize(CellLayout(outcome.cell_dir).ttgir)
    state = STALLED if outcome.stalled else TIMEOUT if outcome.timed_out else f"rc={outcome.rc}"
    runtime.sink.cell_finished(op=request.op.op, round_no=round_no, side=request.side,
                               switch_value=switch_value, outcome=outcome,
                               summary=f"{state} rows={outcome.success_rows} ttgir={ir.files} "
                                       f"{outcome.elapsed_s:.1f}s")
    return SideResult(outcome=outcome, ir=ir)


def whole_on_one_card(run: Callable[[T, Lane, TaskRuntime], R], task: T, lane: Lane,
                      runtime: TaskRuntime) -> R:
    """Run a task on ``lane``; if its operator's kept cells ran on another card, set
    those aside (under ``.aside/``) and run the operator again from its first cell."""
    try:
        return run(task, lane, runtime)
    except OperatorMoved as moved:
        aside = set_aside_moved(moved)
        runtime.sink.line(f"{moved.op_dir.name}: its finished cells ran on {moved.where}, not on "
                          f"this lane; set aside under {aside.parent.name}/{aside.name}/ and the "
                          "operator runs again whole (an operator's cells share one card)")
        runtime.sink.more_cells(len(moved.cells))
        return run(task, lane, runtime)
