"""Screening verdicts from one pinned pair of cells (DESIGN.md section 5).

The criterion is the TTGIR fingerprint. A cell with no ``.ttgir`` has no
fingerprint at all, which is never "equal".
"""

from __future__ import annotations

import attrs

from zl_core.cell import CellOutcome
from zl_core.ttgir_layout import IrSummary

IR_CHANGED = "IR_CHANGED"
NO_IR_DIFF = "NO_IR_DIFF"
NO_TRITON = "NO_TRITON"
NO_ROWS = "NO_ROWS"
TIMEOUT = "TIMEOUT"
FAILED = "FAILED"
VERDICTS = (IR_CHANGED, NO_IR_DIFF, NO_TRITON, NO_ROWS, TIMEOUT, FAILED)
#: Verdicts under which a speedup range may be printed.
MEASURED = (IR_CHANGED, NO_IR_DIFF)


@attrs.frozen(kw_only=True)
class SideResult:
    outcome: CellOutcome | None  # None when the side never ran
    ir: IrSummary
    preflight: str = ""

    @property
    def rows(self) -> int:
        return self.outcome.success_rows if self.outcome else 0


def screen_verdict(a: SideResult, b: SideResult, *, compile_only: bool) -> tuple[str, list[str]]:
    """The verdict for one operator and the notes that explain it."""
    notes: list[str] = []
    for label, side in (("A", a), ("B", b)):
        if side.preflight:
            notes.append(f"{label}: {side.preflight}")
        if side.outcome is not None and side.outcome.timed_out:
            return TIMEOUT, notes + [f"{label} timed out after {side.outcome.elapsed_s:.0f}s"]
    if b.outcome is not None and b.outcome.markers.get("AUTOTUNE_REPLAY_FALLBACK"):
        notes.append(f"B fell back to tuning for {b.outcome.markers['AUTOTUNE_REPLAY_FALLBACK']} "
                     "key(s): configs not fully pinned")
    if compile_only:
        failed = [lbl for lbl, s in (("A", a), ("B", b)) if s.outcome is None or s.outcome.rc != 0]
        if failed:
            return FAILED, notes + [f"compile failed on side {', '.join(failed)} (see run.log)"]
    elif a.rows == 0 or b.rows == 0:
        empty = [lbl for lbl, s in (("A", a), ("B", b)) if s.rows == 0]
        return NO_ROWS, notes + [f"no successful rows on side {', '.join(empty)}"]
    fa, fb = a.ir.fingerprint, b.ir.fingerprint
    if fa is None and fb is None:
        return NO_TRITON, notes + ["no .ttgir on either side: nothing reached the Triton compiler"]
    if fa is None or fb is None:
        missing = "A" if fa is None else "B"
        return IR_CHANGED, notes + [f"side {missing} compiled no Triton kernel"]
    if fa != fb:
        return IR_CHANGED, notes
    return NO_IR_DIFF, notes
