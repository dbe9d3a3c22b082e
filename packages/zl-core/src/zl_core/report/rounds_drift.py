"""Drift in a rounds report: which cells telemetry flags, and which verdicts depend on them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zl_core.decisions.ir_verdict import SWITCH_NO_IR_DIFF
from zl_core.decisions.status import UNJUDGED_FLAGS, judge_cells
from zl_core.store.layout import CampaignLayout, cell_label
from zl_core.store.record import CampaignRecord
from zl_core.store.status_table import CellKey, StatusRow

DRIFT_RULE = ("a verdict depends on drift when dropping the rounds with a flagged cell (either side) "
              "changes it, or leaves fewer than 2 rounds to decide it")


def drift_flags(layout: CampaignLayout, meta: CampaignRecord, status: dict[CellKey, StatusRow],
                identities: Mapping[str, Mapping | None]) -> tuple[dict[str, list[str]], bool]:
    """Flags per cell label, judged from telemetry.tsv where the campaign has one (so a
    newer rule re-judges an older campaign), else status.tsv's flags column."""
    def device_of(key: CellKey) -> str | None:
        # The cell's own device first: a campaign over several lanes spreads its cells.
        op, rnd, side = key
        device = (identities.get(cell_label(op, side, rnd)) or {}).get("device")
        if device in (None, ""):
            device = meta.device
        return None if device in (None, "") else str(device)

    judged = judge_cells(layout.root, status, device_of)
    flags: dict[str, list[str]] = {}
    if judged is None:
        for (op, rnd, side), row in status.items():
            for flag in row.flags.split(","):
                flag = flag.strip()
                if flag and flag != SWITCH_NO_IR_DIFF:
                    flags.setdefault(cell_label(op, side, rnd), []).append(flag)
        return flags, False
    for (op, rnd, side), items in judged.items():
        flags[cell_label(op, side, rnd)] = list(dict.fromkeys(items))
    return flags, True


def split_flags(flags: dict[str, list[str]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(drift flags, notes): "no_samples"-style flags say nothing could be judged."""
    drifted, unjudged = {}, {}
    for label, items in flags.items():
        real = [f for f in items if f not in UNJUDGED_FLAGS]
        if real:
            drifted[label] = real
        elif items:
            unjudged[label] = items
    return drifted, unjudged


def drift_check(shape, rounds: list[int], flagged: set[int], plan) -> dict | None:
    """The shape's own verdict without its flagged rounds (None when none are flagged)."""
    if not any(r in flagged for r in rounds):
        return None
    again = _without(shape.op, [shape], flagged, plan)
    if again is None:
        return {"without_flagged": None, "depends": True, "why": _too_few(rounds, flagged)}
    verdict = again.shapes[0].test.verdict
    return {"without_flagged": verdict, "depends": verdict != shape.test.verdict, "why": ""}


def op_drift_check(op: str, main: Sequence[tuple[dict, object]], flagged: set[int],
                   rounds: list[int], verdict: str, plan) -> dict | None:
    """The operator's verdict without its flagged rounds (None when none are flagged)."""
    if not flagged or not main:
        return None
    again = _without(op, [shape for _, shape in main], flagged, plan)
    if again is None:
        return {"without_flagged": None, "depends": True, "why": _too_few(rounds, flagged)}
    return {"without_flagged": again.verdict, "depends": again.verdict != verdict, "why": ""}


def _too_few(rounds: list[int], flagged: set[int]) -> str:
    return f"only {sum(1 for r in rounds if r not in flagged)} unflagged round(s) left"


def _without(op: str, shapes: list, flagged: set[int], plan):
    """Re-judge ``shapes`` (one operator) with the flagged rounds dropped, or None when
    fewer rounds than a look needs are left."""
    from zl_core.campaigns.judging import MIN_LOOK_ROUNDS, judge

    latencies = {shape.key: {r: pair for r, pair in shape.latencies if r not in flagged}
                 for shape in shapes}
    if len({r for pairs in latencies.values() for r in pairs}) < MIN_LOOK_ROUNDS:
        return None
    return judge({op: latencies}, plan, {op: max(shapes[0].rounds)}).operators[0]


def drift_summary(flags: dict[str, list[str]], unjudged: dict[str, list[str]], telemetry: bool,
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
