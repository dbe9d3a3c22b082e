"""What two sides' generated code says: the screen verdict of one pinned pair
(DESIGN.md section 5) and the A/B campaign's SWITCH_NO_IR_DIFF stop.

The criterion is the TTGIR fingerprint. A cell with no ``.ttgir`` has no
fingerprint at all, which is never "equal". Both rules read fingerprints through
:func:`compare_ir`, so a screen and an A/B campaign cannot disagree on "identical".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from zl_core.cells.cell import CellOutcome, marker_fields

# The verdict names (zl_core.foundation.verdicts), named here too for the engine and the report.
from zl_core.foundation.verdicts import FAILED as FAILED
from zl_core.foundation.verdicts import IR_CHANGED as IR_CHANGED
from zl_core.foundation.verdicts import IR_VERDICTS
from zl_core.foundation.verdicts import NO_IR_DIFF as NO_IR_DIFF
from zl_core.foundation.verdicts import NO_ROWS as NO_ROWS
from zl_core.foundation.verdicts import NO_TRITON as NO_TRITON
from zl_core.foundation.verdicts import SKIPPED as SKIPPED
from zl_core.foundation.verdicts import STALLED as STALLED
from zl_core.foundation.verdicts import SWITCH_NO_IR_DIFF as SWITCH_NO_IR_DIFF
from zl_core.foundation.verdicts import TIMEOUT as TIMEOUT
from zl_core.interface import contract
from zl_core.interface.ttgir_layout import IrSummary

VERDICTS = IR_VERDICTS  # every IR verdict, in the order a screen table lists them

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


def foreign_note(label: str, cell_dir: Path, markers: Mapping[str, object]) -> str:
    """The note for a cell whose benchmark imported another vendor's implementation
    (its ``markers`` count ``FOREIGN_VENDOR_MODULE``; what the marker's line says is read
    from its run.log), or "" for one that did not."""
    if not markers.get(contract.FOREIGN_VENDOR_MODULE):
        return ""
    said = marker_fields(cell_dir, contract.FOREIGN_VENDOR_MODULE)
    return (f"{label}: {contract.FOREIGN_VENDOR_MODULE}{' ' + said if said else ''} (the benchmark "
            "imported another vendor's implementation: is it what this device runs?)")


def screen_verdict(a: SideResult, b: SideResult, *, compile_only: bool) -> tuple[str, list[str]]:
    """The verdict for one operator and the notes that explain it."""
    # Said whatever the verdict: the code judged may not be this vendor's.
    notes: list[str] = [foreign_note(label, side.outcome.cell_dir, side.outcome.markers)
                        for label, side in (("A", a), ("B", b)) if side.outcome is not None]
    notes = [n for n in notes if n]
    for label, side in (("A", a), ("B", b)):
        if side.preflight:
            notes.append(f"{label}: {side.preflight}")
        if side.outcome is not None and side.outcome.stalled:
            why = (f"{label} stalled after {side.outcome.elapsed_s:.0f}s: no progress for its "
                   f"stall window; its Python stacks are in {side.outcome.cell_dir.name}/stacks.txt")
            return STALLED, [*notes, why]
        if side.outcome is not None and side.outcome.timed_out:
            return TIMEOUT, [*notes, f"{label} timed out after {side.outcome.elapsed_s:.0f}s"]
        if side.outcome is not None and side.outcome.rows_error:
            return FAILED, [*notes, f"{label}: {side.outcome.rows_error}"]
    skipped = [f"{label} skipped at run time: {'; '.join(dict.fromkeys(side.outcome.skips))}"
               for label, side in (("A", a), ("B", b)) if side.outcome is not None and side.outcome.skipped]
    if skipped:  # the benchmark declined to run here: no rows to judge, and no failure
        return SKIPPED, notes + skipped
    if b.outcome is not None and b.outcome.markers.get(contract.AUTOTUNE_REPLAY_FALLBACK):
        notes.append(f"B fell back to tuning for {b.outcome.markers[contract.AUTOTUNE_REPLAY_FALLBACK]} "
                     "key(s): configs not fully pinned")
    if compile_only:
        failed = [lbl for lbl, s in (("A", a), ("B", b)) if s.outcome is not None and s.outcome.rc != 0]
        unrun = [lbl for lbl, s in (("A", a), ("B", b)) if s.outcome is None]
        if failed or unrun:
            said = [f"compile failed on side {', '.join(failed)} (see run.log)"] if failed else []
            said += [f"side {', '.join(unrun)} not run"] if unrun else []
            return FAILED, notes + said
    elif a.rows == 0 or b.rows == 0:
        empty = [lbl for lbl, s in (("A", a), ("B", b)) if s.rows == 0]
        return NO_ROWS, [*notes, f"no successful rows on side {', '.join(empty)}"]
    verdict, why = compare_ir(a.ir.fingerprint, b.ir.fingerprint)
    return verdict, notes + ([why] if why else [])


def compare_ir(fa: str | None, fb: str | None) -> tuple[str, str]:
    """NO_TRITON, IR_CHANGED or NO_IR_DIFF from two fingerprints, and why when not plain."""
    if fa is None and fb is None:
        return NO_TRITON, "no .ttgir on either side: nothing reached the Triton compiler"
    if fa is None or fb is None:
        return IR_CHANGED, f"side {'A' if fa is None else 'B'} compiled no Triton kernel"
    return (IR_CHANGED if fa != fb else NO_IR_DIFF), ""


def switch_no_ir_diff(fa: str | None, fb: str | None, *, exempt: bool) -> bool:
    """Whether an A/B operator stops after round 1: identical, non-empty TTGIR.

    ``exempt``: A/A campaigns, controls and ``--allow-no-ir-diff`` time the operator
    anyway. No ``.ttgir`` on either side is not "identical": nothing to compare.
    """
    return not exempt and compare_ir(fa, fb)[0] == NO_IR_DIFF
