"""The rounds report: per shape and per operator verdicts of an A/B campaign.

Also the drift check (flagged cells, verdicts without them) and the device time used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from zl_core import caliber
from zl_core.pairing import FALLBACK, OK, Pair, pair_rows, shape_label
from zl_core.rows import read_cell

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

DRIFT_RULE = ("a verdict depends on drift when dropping the rounds with a flagged cell (either side) "
              "changes it, or leaves fewer than 2 rounds to decide it")
_ROUND_DIR = re.compile(r"^r(\d+)$")
#: drift.flag_cells notes that mean "no telemetry to judge", not "drifted".
UNJUDGED_FLAGS = ("no_samples", "no_busy_samples")


# --------------------------------------------------------------------------- rounds


@attrs.frozen(kw_only=True)
class _OpCells:
    op: str
    control: bool
    rounds: tuple[int, ...]  # complete rounds (both sides present), ascending
    problem: str  # non-empty: this op gets no report, and why
    skipped: str  # non-empty: SWITCH_NO_IR_DIFF (or similar) skip, and why
    notes: tuple[str, ...]


def _label(op: str, round_no: int, side: str) -> str:
    return f"{op} r{round_no:02d}/{side}"


def _op_name(spec: str) -> str:
    return str(spec).split(":", 1)[0]


def _true(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes")


def _status_by_cell(status_rows: list[dict]) -> dict[tuple[str, int, str], dict]:
    """The last status row of every (op, round, side); a rerun cell replaces its row."""
    out = {}
    for row in status_rows:
        try:
            out[(row["op"], int(row["round"]), row["side"])] = row
        except (KeyError, ValueError):
            continue
    return out


def _op_cells(campaign: Path, meta: dict, op: str, control: bool,
              status: dict[tuple[str, int, str], dict]) -> _OpCells:
    op_dir = campaign / op
    found: dict[int, set[str]] = {}
    if op_dir.is_dir():
        for child in op_dir.iterdir():
            m = _ROUND_DIR.match(child.name)
            if m and child.is_dir():
                found[int(m.group(1))] = {s for s in ("A", "B") if (child / s).is_dir()}
    failures = []
    notes = []
    for (s_op, rnd, side), row in sorted(status.items()):
        if s_op != op:
            continue
        if _true(row.get("timed_out")):
            failures.append(f"r{rnd:02d}/{side} timed out (rc={row.get('rc')})")
        elif str(row.get("rc", "0")).strip() != "0":
            failures.append(f"r{rnd:02d}/{side} failed (rc={row.get('rc')})")
        replay = str(row.get("replay_fallback", "0")).strip()
        if replay not in ("", "0"):
            notes.append(f"r{rnd:02d}/{side}: {replay} autotune replay fallback(s): "
                         "configs not fully pinned")
    complete = tuple(sorted(r for r, sides in found.items() if sides == {"A", "B"}))
    partial = sorted(r for r, sides in found.items() if sides != {"A", "B"})
    problem = skipped = ""
    if failures:
        problem = "a cell failed: " + "; ".join(failures)
    elif not found:
        problem = "no cells (never ran)"
    elif partial:
        problem = (f"round(s) {', '.join(f'r{r:02d}' for r in partial)} incomplete "
                   "(one side missing: campaign interrupted?)")
    if not problem:
        skipped = _no_ir_diff(campaign, meta, op, control, complete, status)
    if not problem and not skipped:
        planned = meta.get("rounds")
        if isinstance(planned, int) and len(complete) < planned:
            problem = f"only {len(complete)} of {planned} rounds complete"
        elif len(complete) < 2:
            problem = f"{len(complete)} complete round(s); a verdict needs at least 2"
    return _OpCells(op=op, control=control, rounds=complete, problem=problem, skipped=skipped,
                    notes=tuple(notes))


def _no_ir_diff(campaign: Path, meta: dict, op: str, control: bool, complete: tuple[int, ...],
                status: dict) -> str:
    """Why the op was skipped as SWITCH_NO_IR_DIFF, or "".

    The A/B engine stops such an op after round 1; the report recognises it by a
    flag in status.tsv or, failing that, by the evidence itself: only round 1,
    not a control, and identical non-empty TTGIR fingerprints on both sides.
    """
    flagged = any(s_op == op and "SWITCH_NO_IR_DIFF" in str(row.get("flags", ""))
                  for (s_op, _, _), row in status.items())
    if flagged:
        return "SWITCH_NO_IR_DIFF: identical TTGIR after round 1"
    if control or meta.get("aa") or meta.get("allow_no_ir_diff") or complete != (1,):
        return ""
    from zl_core.ttgir_layout import TTGIR_DIR, summarize

    fa = summarize(campaign / op / "r01" / "A" / TTGIR_DIR).fingerprint
    fb = summarize(campaign / op / "r01" / "B" / TTGIR_DIR).fingerprint
    if fa is not None and fa == fb:
        return "SWITCH_NO_IR_DIFF: identical TTGIR after round 1"
    return ""


def _drift_flags(campaign: Path, meta: dict, status: dict[tuple[str, int, str], dict],
                 identities: Mapping[str, Mapping | None]) -> tuple[dict[str, list[str]], bool]:
    """Flags per cell label, judged from telemetry.tsv where the campaign has one (so a
    newer rule re-judges an older campaign), else status.tsv's flags column."""
    flags: dict[str, list[str]] = {}
    telemetry = campaign / "telemetry.tsv"
    if not telemetry.is_file():
        for (op, rnd, side), row in status.items():
            for flag in str(row.get("flags") or "").split(","):
                flag = flag.strip()
                if flag and flag != "SWITCH_NO_IR_DIFF":
                    flags.setdefault(_label(op, rnd, side), []).append(flag)
        return flags, False
    from zl_core import drift

    windows = []
    for (op, rnd, side), row in status.items():
        try:
            start, end = float(row["start"]), float(row["end"])
        except (KeyError, ValueError):
            continue
        label = _label(op, rnd, side)
        device = meta.get("device")
        if device in (None, ""):
            device = (identities.get(label) or {}).get("device")
        windows.append(drift.CellWindow(label=label, device=None if device is None else str(device),
                                        start=start, end=end,
                                        group=drift.load_group(op, rnd, side)))
    samples = drift.read_telemetry_tsv(telemetry)
    for cell_flag in drift.flag_cells(windows, samples):
        for flag in cell_flag.flags or ():
            if flag not in flags.setdefault(cell_flag.label, []):
                flags[cell_flag.label].append(flag)
    return {k: v for k, v in flags.items() if v}, True


def _split_flags(flags: dict[str, list[str]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(drift flags, notes): "no_samples"-style flags say nothing could be judged."""
    drifted, unjudged = {}, {}
    for label, items in flags.items():
        real = [f for f in items if f not in UNJUDGED_FLAGS]
        if real:
            drifted[label] = real
        elif items:
            unjudged[label] = items
    return drifted, unjudged


def build_rounds(campaign: Path, *, meta: dict | None = None, allow_mismatch: bool = False,
                 threshold_pct: float | None = None) -> dict:
    """Per shape and per operator verdicts over the rounds of an A/B campaign."""
    from zl_core import stats
    from zl_core.campaign import read_campaign
    from zl_core.status import read_status

    campaign = _require_dir(campaign, "campaign")
    meta = meta if meta is not None else read_campaign(campaign)
    if threshold_pct is None:
        threshold_pct = meta.get("threshold_pct")
    threshold = float(DEFAULT_THRESHOLD_PCT if threshold_pct is None else threshold_pct)
    # An adaptive campaign stopped on early looks; its report judges the same way.
    judge = functools.partial(stats.shape_stats, threshold_pct=threshold,
                              early_look=meta.get("rounds") == "auto")
    status = _status_by_cell(read_status(campaign))
    ops = [_op_name(s) for s in meta.get("ops") or []]
    controls = set(meta.get("controls") or [])
    if meta.get("aa"):
        controls.update(ops)
    ops += [c for c in sorted(controls) if c not in ops]

    plans = [_op_cells(campaign, meta, op, op in controls, status) for op in ops]
    reported = [p for p in plans if not p.problem and not p.skipped]

    identities, check = check_caliber_groups(
        ({_label(plan.op, r, s): caliber.read_identity(campaign / plan.op / f"r{r:02d}" / s)
          for r in plan.rounds for s in ("A", "B")} for plan in reported),
        allow_mismatch=allow_mismatch)

    all_flags, telemetry = _drift_flags(campaign, meta, status, identities)
    flags, unjudged = _split_flags(all_flags)
    rows: list[dict] = []
    operators: list[dict] = []
    control_shapes = []
    notes: list[str] = []
    for plan in reported:
        op_rows, op_summary, main_stats = _rounds_op(campaign, plan, judge, flags, stats)
        rows += op_rows
        operators.append(op_summary)
        if plan.control:
            control_shapes += main_stats

    controls_summary = None
    if controls:
        called, total, rate = stats.false_positive_rate(control_shapes)
        controls_summary = {
            "ops": sorted(controls), "aa": bool(meta.get("aa")), "called": called,
            "total": total, "rate": rate,
            "text": f"false-positive rate on this campaign's controls: {called}/{total}",
        }
    drift_summary = _drift_summary(flags, unjudged, telemetry, rows, operators)
    summary = {
        "campaign": str(campaign), "switch": meta.get("switch"),
        "a_value": meta.get("a_value"), "b_value": meta.get("b_value"),
        "a_env": meta.get("a_env"), "b_env": meta.get("b_env"),
        "rounds": meta.get("rounds"), "threshold_pct": threshold,
        "operators": operators,
        "no_report": [{"op": p.op, "reason": p.problem} for p in plans if p.problem],
        "skipped": [{"op": p.op, "reason": p.skipped} for p in plans if p.skipped],
        "controls": controls_summary,
        "drift": drift_summary,
    }
    if any(o["timer"] == "direct" for o in operators):
        notes.append(DIRECT_NOTE)
    summary["device_time"] = _device_time(status)
    notes.append(summary["device_time"]["text"])
    title = f"A/B rounds {meta.get('switch') or ''}: {campaign.name}".replace("  ", " ")
    return _model("rounds", title, caliber_section(identities), check, rows, summary, notes)


def _device_time(status: dict[tuple[str, int, str], dict]) -> dict:
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


def _rounds_op(campaign: Path, plan: _OpCells, judge: Callable, flags: dict[str, list[str]],
               stats) -> tuple[list[dict], dict, list]:
    """Shape rows and the operator summary of one operator with complete rounds."""
    per_round: dict[int, dict[tuple, Pair]] = {}
    notes = list(plan.notes)
    order: list[tuple] = []
    for r in plan.rounds:
        cells = {s: read_cell(campaign / plan.op / f"r{r:02d}" / s) for s in ("A", "B")}
        for s, cell in cells.items():
            notes += _cell_notes(f"r{r:02d}/{s}", cell)
        pairs = pair_rows(cells["A"].rows, cells["B"].rows)
        per_round[r] = {p.key: p for p in pairs}
        order += [p.key for p in pairs if p.key not in order]

    flagged_rounds = {r for r in plan.rounds
                      if any(_label(plan.op, r, s) in flags for s in ("A", "B"))}
    rows: list[dict] = []
    main: list[tuple[dict, object]] = []
    rounds = list(plan.rounds)
    for key in order:
        got = [per_round[r].get(key) for r in rounds]
        classes = [p.cls if p else "missing" for p in got]
        row = {"op": plan.op, "control": plan.control, "dtype": key[0], "size_detail": key[1],
               "occurrence": key[2], "shape": shape_label(key),
               "rounds": [f"r{r:02d}" for r in rounds],
               "a_ms": [p.a.gems_latency_ms if p and p.a else None for p in got],
               "b_ms": [p.b.gems_latency_ms if p and p.b else None for p in got],
               "deltas_pct": [p.delta_pct if p else None for p in got],
               "segment": "incomplete", "timer": None, "verdict": None, "counted": False,
               "stats": None, "reason": "", "drift_rounds": sorted(f"r{r:02d}" for r in flagged_rounds),
               "drift_check": None}
        timers = {p.timer for p in got if p}
        if all(c == OK for c in classes) and len(timers) == 1:
            row["segment"], row["timer"], row["counted"] = "main", timers.pop(), True
        elif all(c == FALLBACK for c in classes):
            row["segment"], row["timer"] = "fallback", "direct"
            row["reason"] = "fell back to direct timing on both sides in every round; kept apart"
        else:
            row["reason"] = "; ".join(
                f"r{r:02d}: {p.reason if p else 'no row on either side'}"
                for r, p in zip(rounds, got) if p is None or p.cls != OK) or "timer changed between rounds"
        if row["segment"] in ("main", "fallback"):
            a = [p.a.gems_latency_ms for p in got]
            b = [p.b.gems_latency_ms for p in got]
            shape = judge(a, b)
            row["stats"] = _jsonable(shape)
            row["verdict"] = shape.verdict
            if row["segment"] == "main":
                main.append((row, shape))
                row["drift_check"] = _drift_check(judge, a, b, rounds, flagged_rounds, shape)
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
    for i, r in enumerate(rounds):
        med = _median(row["deltas_pct"][i] for row, _ in main)
        if med is not None:
            round_medians.append(med)
    verdict = stats.operator_verdict(shapes, round_median_deltas=round_medians)
    spreads = [v for s in shapes for v in (s.a_spread_pct, s.b_spread_pct) if v is not None]
    main_timers = sorted({row["timer"] for row, _ in main if row["timer"]})
    op_verdict = _jsonable(verdict)
    summary = {
        "op": plan.op, "control": plan.control, "rounds": len(rounds),
        "verdict": verdict.verdict, "text": verdict.text,
        "operator": op_verdict,
        "round_median_deltas_pct": dict(zip([f"r{r:02d}" for r in rounds], round_medians))
        if len(round_medians) == len(rounds) else {},
        "median_side_noise_pct": _median(spreads),
        "sign_changed_shapes": verdict.sign_changed_shapes,
        "n_shapes": len(rows), "counted_shapes": len(main),
        "fallback_shapes": sum(1 for r in rows if r["segment"] == "fallback"),
        "incomplete_shapes": sum(1 for r in rows if r["segment"] == "incomplete"),
        "timer": "/".join(main_timers) or None,
        "flagged_rounds": sorted(f"r{r:02d}" for r in flagged_rounds),
        "drift_check": _op_drift_check(stats, judge, main, flagged_rounds, rounds,
                                       verdict.verdict),
        "notes": sorted(set(notes), key=notes.index),
    }
    return rows, summary, shapes


def _drift_check(judge: Callable, a: list[float], b: list[float], rounds: list[int],
                 flagged: set[int], shape) -> dict | None:
    """The shape's verdict without its flagged rounds (None when none are flagged)."""
    mine = [r for r in rounds if r in flagged]
    if not mine:
        return None
    keep = [i for i, r in enumerate(rounds) if r not in flagged]
    if len(keep) < 2:
        return {"without_flagged": None, "depends": True,
                "why": f"only {len(keep)} unflagged round(s) left"}
    again = judge([a[i] for i in keep], [b[i] for i in keep])
    return {"without_flagged": again.verdict, "depends": again.verdict != shape.verdict,
            "why": ""}


def _op_drift_check(stats, judge: Callable, main: list[tuple[dict, object]], flagged: set[int],
                    rounds: list[int], verdict: str) -> dict | None:
    if not flagged or not main:
        return None
    keep = [i for i, r in enumerate(rounds) if r not in flagged]
    if len(keep) < 2:
        return {"without_flagged": None, "depends": True,
                "why": f"only {len(keep)} unflagged round(s) left"}
    shapes = [judge([row["a_ms"][i] for i in keep], [row["b_ms"][i] for i in keep])
              for row, _ in main]
    medians = []
    for i in keep:
        med = _median(row["deltas_pct"][i] for row, _ in main)
        if med is not None:
            medians.append(med)
    again = stats.operator_verdict(shapes, round_median_deltas=medians).verdict
    return {"without_flagged": again, "depends": again != verdict, "why": ""}


def _drift_summary(flags: dict[str, list[str]], unjudged: dict[str, list[str]], telemetry: bool,
                   rows: list[dict], operators: list[dict]) -> dict:
    dependent_shapes = [
        {"op": r["op"], "shape": r["shape"], "verdict": r["verdict"],
         "without_flagged": r["drift_check"]["without_flagged"], "why": r["drift_check"]["why"]}
        for r in rows if r.get("drift_check") and r["drift_check"]["depends"]]
    dependent_ops = [
        {"op": o["op"], "verdict": o["verdict"],
         "without_flagged": o["drift_check"]["without_flagged"], "why": o["drift_check"]["why"]}
        for o in operators if o.get("drift_check") and o["drift_check"]["depends"]]
    return {
        "telemetry": telemetry,
        "flagged_cells": [{"label": k, "flags": v} for k, v in sorted(flags.items())],
        "ops_with_flagged_cells": sorted({k.split(" ", 1)[0] for k in flags}),
        "unjudged_cells": [{"label": k, "flags": v} for k, v in sorted(unjudged.items())],
        "dependent_shapes": dependent_shapes,
        "dependent_operators": dependent_ops,
        "rule": DRIFT_RULE,
    }
