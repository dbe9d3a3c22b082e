"""What a workload's class is decided from, read back from an A/B campaign: its rounds
report (each round's order and delta), its round-1 cells' TTGIR dumps and launch index
(layout conversions scoped to the measured launches at a given floor), its cells'
replay markers, and its cells' accuracy tests where the provider runs them."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from pathlib import Path

from zl_core.interface.contract import AUTOTUNE_REPLAY_FALLBACK
from zl_core.interface.ttgir_layout import summarize
from zl_core.plugins.cell_rows import read_cell
from zl_core.store.layout import SIDES, CampaignLayout, CellLayout

from .classes import Correctness, Evidence
from .correctness import read_side

#: The control side's cells (campaigns.checks writes ``<op>/r01/C``).
CONTROL = "C"


def gather(campaign: Path, model: Mapping, *, floor: int) -> tuple[list[Evidence], list[dict]]:
    """The evidence of every workload of a rounds report ``model`` of ``campaign``, and per
    workload what was counted (scoped and unscoped conversions, the variants left out)."""
    layout = CampaignLayout(Path(campaign))
    summary = model["summary"]
    orders = summary.get("round_orders") or {}
    out, counts = [], []
    for op in summary.get("operators") or []:
        if op.get("control"):
            continue
        name = op["op"]
        ir = {side: summarize(layout.cell(name, side, 1).ttgir, floor) for side in SIDES}
        counts.append({"op": name, "floor": floor,
                       **{f"convert_layouts_{s.lower()}": ir[s].convert_layouts for s in SIDES},
                       **{f"convert_layouts_all_{s.lower()}": ir[s].convert_layouts_all for s in SIDES},
                       **{f"scoped_{s.lower()}": ir[s].scoped for s in SIDES},
                       **{f"excluded_{s.lower()}": [list(u) for u in ir[s].unmeasured] for s in SIDES}})
        missing = [s for s in SIDES if ir[s].fingerprint is None]
        failure = _replay_broken(layout, name, op.get("rounds") or 0)
        if missing:
            failure = failure or f"side {'/'.join(missing)} of round 1 dumped no TTGIR"
        control = layout.cell_dir(name, CONTROL, 1)
        if control.is_dir() and summarize(CellLayout(control).ttgir).fingerprint != ir["A"].fingerprint:
            failure = failure or ("the control side (the switch on, every phase it gates off) "
                                  "compiled other TTGIR than side A: the switch changes code "
                                  "outside its phases")
        check = {s: read_side(layout, name, s) for s in SIDES}
        out.append(Evidence(
            op=name, failure=failure, correctness_a=check["A"], correctness_b=check["B"],
            convert_layouts_a=None if missing else ir["A"].convert_layouts,
            convert_layouts_b=None if missing else ir["B"].convert_layouts,
            order_deltas_pct=_order_deltas(model["rows"], name, orders)))
    for x in summary.get("no_report") or []:
        out.append(Evidence(op=x["op"], failure=f"no report: {x['reason']}"))
    for x in summary.get("skipped") or []:
        out.append(Evidence(op=x["op"], unchanged=f"skipped: {x['reason']}",
                            correctness_a=read_side(layout, x["op"], "A"),
                            correctness_b=read_side(layout, x["op"], "B")))
    return out, counts


def _replay_broken(layout: CampaignLayout, op: str, rounds: int) -> str:
    """Why the candidate's cells did not replay the reference's configs, or ""."""
    fallbacks = 0
    for r in range(1, rounds + 1):
        cell = layout.cell_dir(op, "B", r)
        if cell.is_dir():
            fallbacks += read_cell(cell).markers.get(AUTOTUNE_REPLAY_FALLBACK, 0)
    return (f"a broken replay: {fallbacks} autotune replay fallback(s) in side B's cells "
            "(configs not pinned to side A's)") if fallbacks else ""


def _order_deltas(rows: list, op: str, orders: Mapping[str, str]) -> dict[str, float | None]:
    """Per run order, the median over the operator's counted shapes of each shape's mean
    delta over the rounds of that order."""
    per_order: dict[str, list[float]] = {"AB": [], "BA": []}
    for row in rows:
        if row.get("op") != op or row.get("segment") != "main":
            continue
        for order, means in per_order.items():
            values = [d for name, d in zip(row.get("rounds") or [], row.get("deltas_pct") or [], strict=False)
                      if d is not None and orders.get(name) == order]
            if values:
                means.append(statistics.fmean(values))
    return {order: (statistics.median(v) if v else None) for order, v in per_order.items()}


__all__ = ["Correctness", "gather"]
