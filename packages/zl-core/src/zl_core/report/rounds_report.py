"""The rounds report: per shape and per operator verdicts of an A/B (or A/A) campaign,
the drift check (flagged cells, verdicts without them) and the device time used."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from zl_core import caliber
from zl_core.campaigns.layout import SIDES, CampaignLayout, cell_label, round_name
from zl_core.campaigns.record import is_aa, read_campaign
from zl_core.pairing import pair_rows, shape_label
from zl_core.rows import read_cell
from zl_core.series import FALLBACK_SEGMENT, INCOMPLETE, MAIN, shape_series
from zl_core.status import CellKey, latest_by_cell, read_status

from .common import (
    DEFAULT_THRESHOLD_PCT,
    DIRECT_NOTE,
    _cell_notes,
    _jsonable,
    _median,
    _model,
    _require_dir,
    caliber_section,
    check_caliber_groups,
)
from .rounds_cells import OpCells, op_cells
from .rounds_drift import drift_check, drift_flags, drift_summary, op_drift_check, split_flags


def _op_name(spec: str) -> str:
    return str(spec).split(":", 1)[0]


def build_rounds(campaign: Path, *, meta: dict | None = None, allow_mismatch: bool = False,
                 threshold_pct: float | None = None) -> dict:
    """Per shape and per operator verdicts over the rounds of an A/B campaign."""
    from zl_core import stats

    layout = CampaignLayout(_require_dir(campaign, "campaign"))
    meta = meta if meta is not None else read_campaign(layout.root)
    if threshold_pct is None:
        threshold_pct = meta.get("threshold_pct")
    threshold = float(DEFAULT_THRESHOLD_PCT if threshold_pct is None else threshold_pct)
    # An adaptive campaign stopped on early looks; its report judges the same way.
    judge = functools.partial(stats.shape_stats, threshold_pct=threshold,
                              early_look=meta.get("rounds") == "auto")
    status = latest_by_cell(read_status(layout.root))
    ops = [_op_name(s) for s in meta.get("ops") or []]
    controls = set(meta.get("controls") or [])
    if is_aa(meta):
        controls.update(ops)
    ops += [c for c in sorted(controls) if c not in ops]

    plans = [op_cells(layout, meta, op, op in controls, status) for op in ops]
    reported = [p for p in plans if not p.problem and not p.skipped]

    identities, check = check_caliber_groups(
        ({cell_label(plan.op, s, r): caliber.read_identity(layout.cell_dir(plan.op, s, r))
          for r in plan.rounds for s in SIDES} for plan in reported),
        allow_mismatch=allow_mismatch)

    all_flags, telemetry = drift_flags(layout, meta, status, identities)
    flags, unjudged = split_flags(all_flags)
    rows: list[dict] = []
    operators: list[dict] = []
    control_shapes = []
    notes: list[str] = []
    for plan in reported:
        op_rows, op_summary, main_stats = _rounds_op(layout, plan, judge, flags, stats)
        rows += op_rows
        operators.append(op_summary)
        if plan.control:
            control_shapes += main_stats

    controls_summary = None
    if controls:
        called, total, rate = stats.false_positive_rate(control_shapes)
        controls_summary = {
            "ops": sorted(controls), "aa": is_aa(meta), "called": called,
            "total": total, "rate": rate,
            "text": f"false-positive rate on this campaign's controls: {called}/{total}",
        }
    summary = {
        "campaign": str(layout.root), "switch": meta.get("switch"),
        "a_value": meta.get("a_value"), "b_value": meta.get("b_value"),
        "a_env": meta.get("a_env"), "b_env": meta.get("b_env"),
        "rounds": meta.get("rounds"), "threshold_pct": threshold,
        "operators": operators,
        "no_report": [{"op": p.op, "reason": p.problem} for p in plans if p.problem],
        "skipped": [{"op": p.op, "reason": p.skipped} for p in plans if p.skipped],
        "controls": controls_summary,
        "drift": drift_summary(flags, unjudged, telemetry, rows, operators),
    }
    if any(o["timer"] == "direct" for o in operators):
        notes.append(DIRECT_NOTE)
    summary["device_time"] = _device_time(status)
    notes.append(summary["device_time"]["text"])
    title = f"A/B rounds {meta.get('switch') or ''}: {layout.name}".replace("  ", " ")
    return _model("rounds", title, caliber_section(identities), check, rows, summary, notes)


def _device_time(status: dict[CellKey, dict]) -> dict:
    """Device time the campaign spent (sum of cell wall times) and rounds per operator."""
    per_op: dict[str, dict] = {}
    for (op, rnd, _side), row in status.items():
        try:
            elapsed = float(row.get("elapsed_s") or 0)
        except ValueError:
            elapsed = 0.0
        entry = per_op.setdefault(op, {"seconds": 0.0, "rounds": 0})
        entry["seconds"] += elapsed
        entry["rounds"] = max(entry["rounds"], rnd)
    total = sum(e["seconds"] for e in per_op.values())
    parts = ", ".join(f"{op} {e['rounds']} round(s) {e['seconds']:.0f}s" for op, e in sorted(per_op.items()))
    return {"total_s": round(total, 1), "per_op": per_op,
            "text": f"device time used: {total:.0f}s of cell wall time ({parts})"}


def _rounds_op(layout: CampaignLayout, plan: OpCells, judge: Callable, flags: dict[str, list[str]],
               stats) -> tuple[list[dict], dict, list]:
    """Shape rows and the operator summary of one operator with complete rounds."""
    notes = list(plan.notes)
    pairs_by_round = {}
    for r in plan.rounds:
        cells = {s: read_cell(layout.cell_dir(plan.op, s, r)) for s in SIDES}
        for s, cell in cells.items():
            notes += _cell_notes(f"{round_name(r)}/{s}", cell)
        pairs_by_round[r] = pair_rows(cells["A"].rows, cells["B"].rows)

    flagged_rounds = {r for r in plan.rounds
                      if any(cell_label(plan.op, s, r) in flags for s in SIDES)}
    rows: list[dict] = []
    main: list[tuple[dict, object]] = []
    rounds = list(plan.rounds)
    for series in shape_series(pairs_by_round):
        key = series.key
        row = {"op": plan.op, "control": plan.control, "dtype": key[0], "size_detail": key[1],
               "occurrence": key[2], "shape": shape_label(key),
               "rounds": [round_name(r) for r in rounds],
               "a_ms": series.a_ms, "b_ms": series.b_ms, "deltas_pct": series.deltas_pct,
               "segment": series.segment, "timer": series.timer, "verdict": None,
               "counted": series.segment == MAIN, "stats": None, "reason": series.reason,
               "drift_rounds": sorted(round_name(r) for r in flagged_rounds),
               "drift_check": None}
        if series.segment in (MAIN, FALLBACK_SEGMENT):
            a, b = series.a_ms, series.b_ms
            shape = judge(a, b)
            row["stats"] = _jsonable(shape)
            row["verdict"] = shape.verdict
            if series.segment == MAIN:
                main.append((row, shape))
                row["drift_check"] = drift_check(judge, a, b, rounds, flagged_rounds, shape)
        rows.append(row)

    shapes = [s for _, s in main]
    short = [st for st in shapes if st.ci_rank == 0 and not st.ci_method.startswith(
        stats.EARLY_CI_METHOD) and st.n > 0]
    if short:
        need = stats.min_rounds_for(shapes[0].confidence)
        notes.append(f"{len(rounds)} round(s) cannot decide a shape at "
                     f"{shapes[0].confidence:.0%}: the exact interval needs >= {need} rounds; "
                     "rerun with more --rounds, or --rounds auto (early looks from round "
                     f"{stats.MIN_EARLY_ROUNDS})")
    round_medians = []
    for i, _r in enumerate(rounds):
        med = _median(row["deltas_pct"][i] for row, _ in main)
        if med is not None:
            round_medians.append(med)
    verdict = stats.operator_verdict(shapes, round_median_deltas=round_medians)
    spreads = [v for s in shapes for v in (s.a_spread_pct, s.b_spread_pct) if v is not None]
    main_timers = sorted({row["timer"] for row, _ in main if row["timer"]})
    summary = {
        "op": plan.op, "control": plan.control, "rounds": len(rounds),
        "verdict": verdict.verdict, "text": verdict.text,
        "operator": _jsonable(verdict),
        "round_median_deltas_pct": dict(zip([round_name(r) for r in rounds], round_medians))
        if len(round_medians) == len(rounds) else {},
        "median_side_noise_pct": _median(spreads),
        "sign_changed_shapes": verdict.sign_changed_shapes,
        "n_shapes": len(rows), "counted_shapes": len(main),
        "fallback_shapes": sum(1 for r in rows if r["segment"] == FALLBACK_SEGMENT),
        "incomplete_shapes": sum(1 for r in rows if r["segment"] == INCOMPLETE),
        "timer": "/".join(main_timers) or None,
        "flagged_rounds": sorted(round_name(r) for r in flagged_rounds),
        "drift_check": op_drift_check(stats, judge, main, flagged_rounds, rounds,
                                      verdict.verdict),
        "notes": sorted(set(notes), key=notes.index),
    }
    return rows, summary, shapes
