"""Which cells of an A/B campaign an operator's report may use, and why not when not.

An operator gets a report when every cell of its complete rounds finished cleanly
and it was not stopped as SWITCH_NO_IR_DIFF or by a benchmark that skipped at run
time; otherwise the reason is carried.
"""

from __future__ import annotations

import attrs

from zl_core.decisions.ir_verdict import SKIPPED, SWITCH_NO_IR_DIFF, foreign_note, switch_no_ir_diff
from zl_core.foundation.errors import BadInputError
from zl_core.interface import caliber
from zl_core.interface.ttgir_layout import summarize
from zl_core.store.layout import REPICK, RETUNED, SIDES, CampaignLayout, round_name
from zl_core.store.record import CampaignRecord
from zl_core.store.status_table import CellKey, StatusRow

SKIPPED_NO_IR_DIFF = f"{SWITCH_NO_IR_DIFF}: identical TTGIR after round 1"


@attrs.frozen(kw_only=True)
class OpCells:
    op: str
    control: bool
    rounds: tuple[int, ...]  # complete rounds (both sides present), ascending
    problem: str  # non-empty: this op gets no report, and why
    skipped: str  # non-empty: SWITCH_NO_IR_DIFF, or SKIPPED at run time, and why
    notes: tuple[str, ...]


def _true(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes")


def op_cells(layout: CampaignLayout, meta: CampaignRecord, op: str, control: bool,
             status: dict[CellKey, StatusRow]) -> OpCells:
    sides = (*SIDES, RETUNED) if meta.retuned else SIDES  # a round of a re-tuned campaign has three
    found = layout.rounds_on_disk(op, sides)
    failures, notes = _cell_findings(layout, op, status)
    complete = tuple(sorted(r for r, held in found.items() if held == set(sides)))
    problem, skipped = _stopped(layout, op, status, found, failures, sides)
    if not problem and not skipped:
        skipped = _no_ir_diff(layout, meta, op, control, complete, status)
    if not problem and not skipped:
        problem = _too_few_rounds(meta, complete)
    return OpCells(op=op, control=control, rounds=complete, problem=problem, skipped=skipped,
                   notes=tuple(notes))


def _cell_findings(layout: CampaignLayout, op: str, status: dict[CellKey, StatusRow]
                   ) -> tuple[list[str], list[str]]:
    """The op's failed cells, and the notes its cells carry (a foreign module first)."""
    failures = []
    notes = []
    foreign = ""
    for (s_op, rnd, side), row in sorted(status.items()):
        if s_op != op:
            continue
        where = f"{round_name(rnd)}/{side}"
        foreign = foreign or _foreign(layout, where, row)
        failure = _failure(where, row)
        if failure and side == REPICK:  # no round's timing: its picks are a reference only
            notes.append(f"{failure}: side A's second record, so no pick-noise reference")
        elif failure:
            failures.append(failure)
        replay = row.replay_fallback.strip()
        if replay not in ("", "0"):
            notes.append(f"{where}: {replay} autotune replay fallback(s): configs not fully pinned")
    if foreign:  # once per operator: every round imports the same modules
        notes.insert(0, foreign)
    return failures, notes


def _failure(where: str, row: StatusRow) -> str:
    """How one cell failed, or ""."""
    if _true(row.stalled):
        return f"{where} stalled (rc={row.rc}; stacks in {where}/stacks.txt)"
    if _true(row.timed_out):
        return f"{where} timed out (rc={row.rc})"
    if row.rc.strip() != "0":
        return f"{where} failed (rc={row.rc})"
    return ""


def _stopped(layout: CampaignLayout, op: str, status: dict[CellKey, StatusRow],
             found: dict[int, frozenset[str]], failures: list[str],
             sides: tuple[str, ...] = SIDES) -> tuple[str, str]:
    """(problem, skipped) read from the cells alone: a failed cell, a benchmark that
    skipped at run time, no cells, or a round with one side missing; ("", "") if none."""
    if failures:
        return "a cell failed: " + "; ".join(failures), ""
    declined = _runtime_skip(layout, op, status)
    if declined:
        return "", declined  # the engine stopped the operator at that cell
    if not found:
        return "no cells (never ran)", ""
    partial = sorted(r for r, held in found.items() if held != set(sides))
    if partial:
        return (f"round(s) {', '.join(round_name(r) for r in partial)} incomplete "
                "(one side missing: campaign interrupted?)"), ""
    return "", ""


def _too_few_rounds(meta: CampaignRecord, complete: tuple[int, ...]) -> str:
    """Why the complete rounds are too few for a verdict, or ""."""
    planned = meta.rounds
    if isinstance(planned, int) and len(complete) < planned:
        return f"only {len(complete)} of {planned} rounds complete"
    if len(complete) < 2:
        return f"{len(complete)} complete round(s); a verdict needs at least 2"
    return ""


def _foreign(layout: CampaignLayout, where: str, row: StatusRow) -> str:
    """The FOREIGN_VENDOR_MODULE note of one cell, from the markers its identity counted."""
    try:
        identity = caliber.read_identity(layout.root / row.cell) if row.cell else None
    except BadInputError:
        return ""  # the caliber check names a damaged identity
    markers = identity.markers if identity is not None else None
    if not markers:
        return ""
    return foreign_note(where, layout.root / row.cell, markers)


def _runtime_skip(layout: CampaignLayout, op: str, status: dict[CellKey, StatusRow]) -> str:
    """Why the op's benchmark skipped at run time (a cell that ran cleanly, measured no
    row and recorded its tests' skips), or ""."""
    for (s_op, rnd, side), row in sorted(status.items()):
        if s_op != op or row.rc.strip() != "0" or not row.cell:
            continue
        if row.success_rows.strip() not in ("", "0") or row.failed_rows.strip() not in ("", "0"):
            continue
        try:
            identity = caliber.read_identity(layout.root / row.cell)
            skips = identity.skips if identity is not None else ()
        except BadInputError:
            continue  # the caliber check names a damaged identity
        if skips:
            return (f"{SKIPPED}: {round_name(rnd)}/{side} skipped at run time: "
                    + "; ".join(dict.fromkeys(str(s) for s in skips)))
    return ""


def _no_ir_diff(layout: CampaignLayout, meta: CampaignRecord, op: str, control: bool,
                complete: tuple[int, ...], status: dict[CellKey, StatusRow]) -> str:
    """Why the op was skipped as SWITCH_NO_IR_DIFF, or "".

    The A/B engine stops such an op after round 1 and flags it in status.tsv; failing
    the flag, the report applies the engine's own rule to the round-1 cells on disk.
    """
    flagged = any(s_op == op and SWITCH_NO_IR_DIFF in row.flags
                  for (s_op, _, _), row in status.items())
    if flagged:
        return SKIPPED_NO_IR_DIFF
    exempt = control or meta.is_aa or bool(meta.allow_no_ir_diff)
    if exempt or complete != (1,):
        return ""
    fa, fb = (summarize(layout.cell(op, side, 1).ttgir).fingerprint for side in SIDES)
    return SKIPPED_NO_IR_DIFF if switch_no_ir_diff(fa, fb, exempt=exempt) else ""
