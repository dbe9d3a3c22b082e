"""The rounds report: per shape and per operator verdicts of an A/B (or A/A) campaign,
the drift check (flagged cells, verdicts without them) and the device time used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zl_core import stats
from zl_core.campaigns.judging import (
    judge,
    recorded_round_order,
    round_orders,
    series_latencies,
    stats_plan,
)
from zl_core.decisions.pairing import pair_rows, shape_label
from zl_core.decisions.series import FALLBACK_SEGMENT, INCOMPLETE, MAIN, shape_series
from zl_core.decisions.status import latest_by_cell, read_status
from zl_core.interface import caliber
from zl_core.ir.section import ir_section
from zl_core.plugins.cell_rows import read_cell
from zl_core.store.layout import RETUNED, SIDES, CampaignLayout, cell_label, round_name
from zl_core.store.record import CampaignRecord, read_campaign
from zl_core.store.status_table import CellKey, StatusRow

from .common import (
    DEFAULT_THRESHOLD_PCT,
    DIRECT_NOTE,
    SCHEMA,
    _cell_notes,
    _median,
    _model,
    _require_dir,
    caliber_section,
    check_caliber_groups,
)
from .headline import DECIDED, geometric_mean, verdict_estimate
from .judged import judged_then_and_now, sealed_classes
from .provenance import provenance
from .retuned import LABELS, campaign_effects, judge_effects, operator_effects, shape_effects
from .rounds_cells import OpCells, op_cells
from .rounds_drift import drift_check, drift_flags, drift_summary, op_drift_check, split_flags
from .time_spent import time_spent
from .timeline import campaign_timeline

CALLS = (stats.FASTER, stats.SLOWER)


def _op_name(spec: str) -> str:
    return str(spec).split(":", 1)[0]


def build_rounds(campaign: Path, *, meta: CampaignRecord | None = None, allow_mismatch: bool = False,
                 threshold_pct: float | None = None) -> dict:
    """Per shape and per operator verdicts over the rounds of an A/B campaign."""
    layout = CampaignLayout(_require_dir(campaign, "campaign"))
    meta = meta if meta is not None else read_campaign(layout.root)
    loop_threshold = meta.threshold_pct
    if threshold_pct is None:
        threshold_pct = loop_threshold
    threshold = float(DEFAULT_THRESHOLD_PCT if threshold_pct is None else threshold_pct)
    status = latest_by_cell(read_status(layout.root))
    ops = [_op_name(s) for s in meta.ops or ()]
    controls = set(meta.controls or ())
    if meta.is_aa:
        controls.update(ops)
    ops += [c for c in sorted(controls) if c not in ops]

    plans = [op_cells(layout, meta, op, op in controls, status) for op in ops]
    reported = [p for p in plans if not p.problem and not p.skipped]

    # Where no operator was timed (each stopped on identical TTGIR), the conditions its
    # round-1 cells ran under still say where the campaign ran.
    described = reported or [p for p in plans if p.skipped and not p.problem]
    sides = (*SIDES, RETUNED) if meta.retuned else SIDES
    groups = [{cell_label(plan.op, s, r): caliber.read_identity(layout.cell_dir(plan.op, s, r))
               for r in plan.rounds for s in sides} for plan in described]
    identities, check = check_caliber_groups(groups, allow_mismatch=allow_mismatch,
                                             pinned=("A", "B") if meta.retuned else None)

    all_flags, telemetry = drift_flags(layout, meta, status, identities)
    flags, unjudged = split_flags(all_flags)
    notes: list[str] = []
    # One judgement of the whole campaign, by the function the adaptive loop stops on.
    loaded = {plan.op: _load_op(layout, plan) for plan in reported}
    done = {plan.op: max(plan.rounds) for plan in reported}
    judged_by = stats_plan(rounds=meta.rounds, max_rounds=meta.max_rounds,
                           threshold_pct=threshold, rounds_done=max(done.values(), default=0),
                           round_order=recorded_round_order(meta))
    verdict = judge({op: series_latencies(series) for op, (series, _) in loaded.items()},
                    judged_by, done)
    fallback = judge({op: series_latencies(series, fallback=True) for op, (series, _) in loaded.items()},
                     judged_by, done)
    notes.append(verdict.fdr_text)
    effects = (judge_effects(layout, {plan.op: plan.rounds for plan in reported}, judged_by)
               if meta.retuned else None)
    if (meta.rounds == "auto" and loop_threshold is not None
            and float(loop_threshold) != threshold):
        notes.append(f"judged at --threshold {threshold:g}% while the adaptive loop stopped on "
                     f"{float(loop_threshold):g}%: intervals and verdicts stay valid at any threshold, "
                     "but the rounds were chosen to decide the loop's, so more shapes may be undecided")
    rows: list[dict] = []
    operators: list[dict] = []
    control_shapes = []
    for plan in reported:
        op_rows, op_summary, main_shapes = _rounds_op(
            plan, loaded[plan.op], verdict.operator(plan.op), fallback.operator(plan.op),
            flags, judged_by)
        if effects is not None:
            for row, key in zip(op_rows, (s.key for s in loaded[plan.op][0]), strict=True):
                row["retuned"] = shape_effects(row, effects, plan.op, key)
            op_summary["retuned"] = operator_effects(layout, plan.op, op_summary, effects, threshold)
        rows += op_rows
        op_summary["ir"] = ir_section(*(layout.cell_dir(plan.op, s, 1) for s in SIDES))
        operators.append(op_summary)
        if plan.control:
            control_shapes += main_shapes

    controls_summary = None
    if controls:
        total = len(control_shapes)
        called = sum(1 for st in control_shapes if st.verdict in CALLS)
        rate = called / total if total else None
        controls_summary = {
            "ops": sorted(controls), "aa": meta.is_aa, "called": called,
            "total": total, "rate": rate,
            "text": f"false-positive rate on this campaign's controls: {called}/{total}",
        }
    summary: dict[str, Any] = {  # the model's JSON: read back by key below
        "campaign": str(layout.root), "switch": meta.switch,
        "a_value": meta.a_value, "b_value": meta.b_value,
        "a_env": meta.a_env, "b_env": meta.b_env,
        "rounds": meta.rounds, "threshold_pct": threshold,
        "plan": judged_by.to_json(),
        "round_orders": round_orders(judged_by.round_order, max(done.values(), default=0)),
        "fdr": {"level": verdict.fdr_level, "tested": verdict.tested,
                "selected": verdict.selected, "text": verdict.fdr_text},
        "operators": operators,
        "no_report": [{"op": p.op, "reason": p.problem} for p in plans if p.problem],
        "skipped": [{"op": p.op, "reason": p.skipped} for p in plans if p.skipped],
        "controls": controls_summary,
        "drift": drift_summary(flags, unjudged, telemetry, rows, operators),
    }
    if effects is not None:
        summary["retuned"] = campaign_effects(operators, effects)
        notes += [f"{LABELS[e]}: {v.fdr_text}" for e, v in effects.items()]
        notes.append(summary["retuned"]["text"])
    if any(o["timer"] == "direct" for o in operators):
        notes.append(DIRECT_NOTE)
    summary["device_time"] = _device_time(status, rows)
    summary["geomean"] = geometric_mean(rows)
    summary["provenance"] = provenance(identities)
    summary["timeline"] = campaign_timeline(layout)
    summary["time_spent"] = time_spent(layout)
    notes.append(summary["device_time"]["text"])
    summary["judged"] = judged_then_and_now(layout, {"schema": SCHEMA, "rows": rows, "summary": summary})
    summary["classes"] = sealed_classes(layout)
    if summary["judged"]["then"] is not None and summary["judged"]["why"]:
        notes.append(summary["judged"]["text"])
    title = (f"A/A rounds (both sides side A's environment, a noise control): {layout.name}"
             if meta.is_aa else
             f"A/B rounds of {meta.switch or 'the switch'}: {layout.name}")
    return _model("rounds", title, caliber_section(identities), check, rows, summary, notes)


def _device_time(status: dict[CellKey, StatusRow], rows: list[dict]) -> dict:
    """Device time the campaign spent (sum of cell wall times), rounds per operator, and
    seconds per decided shape verdict: what a budget or a noise change must lower."""
    per_op: dict[str, dict] = {}
    for (op, rnd, _side), row in status.items():
        elapsed = row.elapsed or 0.0
        entry = per_op.setdefault(op, {"seconds": 0.0, "rounds": 0})
        entry["seconds"] += elapsed
        entry["rounds"] = max(entry["rounds"], rnd)
    total = sum(e["seconds"] for e in per_op.values())
    parts = ", ".join(f"{op} {e['rounds']} round(s) {e['seconds']:.0f}s" for op, e in sorted(per_op.items()))
    counted = [r for r in rows if r.get("counted")]
    decided = sum(1 for r in counted if r.get("verdict") in DECIDED)
    per_decided = round(total / decided, 1) if decided else None
    text = f"device time used: {total:.0f}s of cell wall time ({parts})"
    if counted:
        text += (f"; {decided} of {len(counted)} shape verdict(s) decided"
                 + (f", {per_decided:.1f}s per decided verdict" if decided else ""))
    return {"total_s": round(total, 1), "per_op": per_op, "decided_shapes": decided,
            "counted_shapes": len(counted), "s_per_decided_shape": per_decided, "text": text}


def _load_op(layout: CampaignLayout, plan: OpCells) -> tuple[list, list[str]]:
    """The operator's shape series over its complete rounds, and its cells' notes."""
    notes = list(plan.notes)
    pairs_by_round = {}
    for r in plan.rounds:
        cells = {s: read_cell(layout.cell_dir(plan.op, s, r)) for s in SIDES}
        for s, cell in cells.items():
            notes += _cell_notes(f"{round_name(r)}/{s}", cell)
        pairs_by_round[r] = pair_rows(cells["A"].rows, cells["B"].rows)
    return shape_series(pairs_by_round), notes


def _rounds_op(plan: OpCells, loaded: tuple[list, list[str]], op_verdict: stats.OperatorVerdict,
               fallback_verdict: stats.OperatorVerdict, flags: dict[str, list[str]],
               judged_by: stats.Plan) -> tuple[list[dict], dict, list]:
    """Shape rows and the operator summary of one operator with complete rounds."""
    series_list, notes = loaded
    flagged_rounds = {r for r in plan.rounds
                      if any(cell_label(plan.op, s, r) in flags for s in SIDES)}
    judged = {s.key: s for s in op_verdict.shapes}
    judged.update({s.key: s for s in fallback_verdict.shapes})
    rows: list[dict] = []
    main: list[tuple[dict, stats.ShapeVerdict]] = []
    rounds = list(plan.rounds)
    for series in series_list:
        key = series.key
        shape = judged.get(key)
        row = {"op": plan.op, "control": plan.control, "dtype": key[0], "size_detail": key[1],
               "occurrence": key[2], "shape": shape_label(key),
               "rounds": [round_name(r) for r in rounds],
               "a_ms": series.a_ms, "b_ms": series.b_ms, "deltas_pct": series.deltas_pct,
               "a_within_pct": _median(series.a_within_pct),
               "b_within_pct": _median(series.b_within_pct),
               "segment": series.segment, "timer": series.timer, "verdict": None,
               "counted": shape is not None and series.segment != FALLBACK_SEGMENT,
               "stats": None, "reason": series.reason,
               "drift_rounds": sorted(round_name(r) for r in flagged_rounds),
               "drift_check": None}
        if shape is not None:
            row["stats"] = shape.to_json()
            row["verdict"] = shape.verdict
            if row["counted"]:
                main.append((row, shape))
                row["drift_check"] = drift_check(shape, rounds, flagged_rounds, judged_by)
        rows.append(row)

    shapes = [s for _, s in main]
    round_medians = []
    for i, _r in enumerate(rounds):
        med = _median(row["deltas_pct"][i] for row, _ in main if row["segment"] == MAIN)
        if med is not None:
            round_medians.append(med)
    spreads = [v for s in shapes for v in (s.a_spread_pct, s.b_spread_pct) if v is not None]
    within = [row[k] for row, _ in main for k in ("a_within_pct", "b_within_pct")]
    main_timers = sorted({row["timer"] for row, _ in main if row["timer"]})
    medians = [s.median_delta_pct for s in shapes if s.n]
    operator = op_verdict.to_json()
    operator["median_of_medians_pct"] = _median(medians)
    operator["range_of_round_medians"] = [min(round_medians), max(round_medians)] if round_medians else None
    summary = {
        "op": plan.op, "control": plan.control, "rounds": len(rounds),
        "verdict": op_verdict.verdict, "text": op_verdict.text,
        "operator": operator,
        "estimate": verdict_estimate(operator, [row["stats"] for row, _ in main if row["segment"] == MAIN]),
        "round_median_deltas_pct": dict(zip([round_name(r) for r in rounds], round_medians, strict=True))
        if len(round_medians) == len(rounds) else {},
        "median_side_noise_pct": _median(spreads),
        # The same measure inside one cell (its graph replays). A side noise far above it
        # comes from between measurements, which only more rounds average out.
        "median_within_cell_pct": _median(within),
        "sign_changed_shapes": op_verdict.sign_changed_shapes,
        "n_shapes": len(rows), "counted_shapes": len(main),
        "fallback_shapes": sum(1 for r in rows if r["segment"] == FALLBACK_SEGMENT),
        "incomplete_shapes": sum(1 for r in rows if r["segment"] == INCOMPLETE),
        "timer": "/".join(main_timers) or None,
        "flagged_rounds": sorted(round_name(r) for r in flagged_rounds),
        "drift_check": op_drift_check(plan.op, main, flagged_rounds, rounds, op_verdict.verdict,
                                      judged_by),
        "notes": sorted(set(notes), key=notes.index),
    }
    return rows, summary, shapes
