"""The notes of a compile-only verdict name only what happened: a side that never ran
is "not run", not "compile failed"."""

from __future__ import annotations

from pathlib import Path

from zl_core.cells.cell import CellOutcome
from zl_core.decisions.ir_verdict import FAILED, SideResult, screen_verdict
from zl_core.interface.ttgir_layout import IrSummary

NO_IR = IrSummary(fingerprint=None, files=0, kernels=0, convert_layouts=0)


def _side(rc: int | None) -> SideResult:
    if rc is None:
        return SideResult(outcome=None, ir=NO_IR, preflight="")
    return SideResult(outcome=CellOutcome(cell_dir=Path("."), rc=rc, timed_out=False, elapsed_s=1.0,
                                          start=0.0, end=1.0, markers={}, success_rows=0,
                                          failed_rows=0), ir=NO_IR)


def test_a_side_that_never_ran_is_not_called_a_failed_compile():
    verdict, notes = screen_verdict(_side(1), _side(None), compile_only=True)
    assert verdict == FAILED
    assert notes == ["compile failed on side A (see run.log)", "side B not run"]


def test_both_sides_failing_to_compile_are_both_named():
    verdict, notes = screen_verdict(_side(1), _side(2), compile_only=True)
    assert (verdict, notes) == (FAILED, ["compile failed on side A, B (see run.log)"])
