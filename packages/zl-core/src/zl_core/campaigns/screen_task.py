"""A screen task: one operator's pinned pair (A records, B replays A) and its verdict."""

from __future__ import annotations

import attrs

from zl_core.decisions.ir_verdict import SideResult, screen_verdict
from zl_core.foundation.backend import Backend
from zl_core.foundation.switches import Sides
from zl_core.interface import caliber
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest
from zl_core.interface.ttgir_layout import LAUNCH_FLOOR, IrSummary
from zl_core.store.layout import CampaignLayout

from .cell_run import EMPTY_IR, run_side, whole_on_one_card
from .executor import Lane, TaskRuntime
from .settings import CellSettings


@attrs.frozen(kw_only=True)
class ScreenTask:
    """One operator of a screen: side A records into ``<op>/A``, side B replays it into
    ``<op>/B``; the cells are made where the task runs, on its lane."""

    op: OpSpec
    suite: str  # the provider's name, resolved where the task runs
    backend: Backend
    sides: Sides
    settings: CellSettings
    layout: CampaignLayout

    def request(self, lane: Lane, side: str) -> CellRequest:
        """Side ``side``'s cell on ``lane``: A records, B replays A's record."""
        layout = lane.layout(self.layout)
        return self.settings.pinned_request(op=self.op, backend=self.backend, sides=self.sides, side=side,
                                            device=lane.device, out_dir=layout.cell_dir(self.op.op, side),
                                            record_cell=layout.cell_dir(self.op.op, "A"))


@attrs.frozen(kw_only=True)
class ScreenResult:
    op: OpSpec
    verdict: str
    notes: tuple[str, ...]
    row: dict  # the operator's row of screen.tsv / screen.json


def run_screen_task(task: ScreenTask, lane: Lane, runtime: TaskRuntime) -> ScreenResult:
    """Run A, then B unless A did not complete, and judge the pair; both on the lane's card."""
    return whole_on_one_card(_run_pair, task, lane, runtime)


def _run_pair(task: ScreenTask, lane: Lane, runtime: TaskRuntime) -> ScreenResult:
    op, sides = task.op, task.sides
    a_cell = task.request(lane, "A")
    a = run_side(runtime, task.suite, a_cell, round_no=0, switch_value=sides.value("A"))
    if a.preflight or (a.outcome is not None and a.outcome.timed_out):
        b = SideResult(outcome=None, ir=EMPTY_IR, preflight="not run: side A did not complete")
        runtime.sink.cell_skipped(op=op.op, round_no=0, side="B", why="side A did not complete")
    elif a.outcome is not None and a.outcome.skipped:  # the benchmark declined this device
        b = SideResult(outcome=None, ir=EMPTY_IR)
        runtime.sink.cell_skipped(op=op.op, round_no=0, side="B", why="side A skipped at run time")
    else:
        b = run_side(runtime, task.suite, task.request(lane, "B"), round_no=0,
                     switch_value=sides.value("B"))
    verdict, notes = screen_verdict(a, b, compile_only=task.settings.compile_only)
    a_dir = a_cell.out_dir
    identity = caliber.read_identity(a_dir) if a_dir.is_dir() else None
    runtime.sink.line(f"{op.op}: {verdict}" + (f" ({'; '.join(notes)})" if notes else ""))
    return ScreenResult(op=op, verdict=verdict, notes=tuple(notes),
                        row=screen_row(op, verdict, notes, a, b, identity))


def screen_row(op: OpSpec, verdict: str, notes: list[str], a: SideResult, b: SideResult,
               identity: caliber.CellIdentity | None) -> dict:
    def elapsed(s: SideResult) -> str:
        return f"{s.outcome.elapsed_s:.1f}" if s.outcome else ""

    row = {
        "op": op.op, "op_file": op.op_file, "dtypes": ",".join(op.dtypes), "verdict": verdict,
        "rows_a": a.rows, "rows_b": b.rows, "kernels_a": a.ir.kernels, "kernels_b": b.ir.kernels,
        "convert_layouts_a": a.ir.convert_layouts, "convert_layouts_b": b.ir.convert_layouts,
        "convert_layouts_all_a": a.ir.convert_layouts_all,
        "convert_layouts_all_b": b.ir.convert_layouts_all,
        "launch_scope": launch_scope(a.ir, b.ir),
        "unmeasured_a": unmeasured_text(a.ir), "unmeasured_b": unmeasured_text(b.ir),
        "ttgir_files_a": a.ir.files, "ttgir_files_b": b.ir.files,
        "fingerprint_a": a.ir.fingerprint or "", "fingerprint_b": b.ir.fingerprint or "",
        "elapsed_a": elapsed(a), "elapsed_b": elapsed(b),
        "timed_out": int(any(s.outcome is not None and s.outcome.timed_out for s in (a, b))),
        "notes": "; ".join(notes),
    }
    row.update({k: ("" if v is None else v) for k, v in caliber.caliber_of(identity).items()})
    return row


def launch_scope(a: IrSummary, b: IrSummary) -> str:
    """What ``convert_layouts_a/b`` count: the variants launched more than the floor, or
    every variant when a side launched nothing it could be scoped by."""
    if a.files == 0 and b.files == 0:
        return ""
    if (a.scoped or a.files == 0) and (b.scoped or b.files == 0):
        return f"launches>{LAUNCH_FLOOR}"
    return "all variants (no launches recorded)"


def unmeasured_text(ir: IrSummary) -> str:
    """The variants left out of a side's count that hold convert_layouts."""
    return "; ".join(f"{rel} ({n} launch(es), {c} convert_layout)" for rel, n, c in ir.unmeasured)
