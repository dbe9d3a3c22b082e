"""A re-tuned campaign's three effects (``zl ab --retuned``), drawn per operator: pinned
(B vs A, the switch at A's configs), shipped (R vs A, the switch after the autotuner
re-tunes) and the autotuner's part (R vs B); the keys whose pick changed, and how often
side A's own picks reproduce."""

from __future__ import annotations

from collections.abc import Mapping

from zl_report.blocks import Block, Heading, Para, Table
from zl_report.format import VERDICT_TONES, interval_estimate, pct, short_shape, span

EFFECTS = ("pinned", "shipped", "autotune")
LABELS = {"pinned": "pinned (B vs A)", "shipped": "shipped (R vs A)", "autotune": "autotuner's part (R vs B)"}
#: The per-shape table's column names of each effect: verdict, estimate, interval.
COLUMNS = {"pinned": ("pinned B vs A", "pinned est.", "pinned CI"),
           "shipped": ("shipped R vs A", "shipped est.", "shipped CI"),
           "autotune": ("autotuner R vs B", "autotuner est.", "autotuner CI")}


def campaign_blocks(summary: Mapping) -> list[Block]:
    """The campaign's line: what the three effects are and how the picks moved."""
    retuned = summary.get("retuned")
    if not retuned:
        return []
    return [Para(text="three effects per shape: pinned (B vs A: the switch at side A's autotune "
                      "picks), shipped (R vs A: side B's environment re-tuned, what users get) and "
                      "the autotuner's part (R vs B)"),
            Para(text=retuned["text"], tone="muted")]


def operator_blocks(model: Mapping, op: Mapping) -> list[Block]:
    """An operator's three effects, shape by shape, and its changed picks."""
    retuned = op.get("retuned")
    if not retuned:
        return []
    blocks: list[Block] = [Heading(text=f"{op['op']}: pinned, shipped and the autotuner's part", level=3)]
    blocks.append(Para(text="; ".join(f"{LABELS[e]} {retuned[e]['verdict']}{_estimate(retuned[e].get('estimate'))}"
                                      for e in EFFECTS)))
    rows, tones = [], []
    for r in (x for x in model["rows"] if x["op"] == op["op"] and x.get("retuned")):
        cells = [short_shape(r["shape"])]
        for effect in EFFECTS:
            judged = r["retuned"][effect]
            st = judged.get("stats") or {}
            cells += [judged.get("verdict") or "-", pct(interval_estimate(st)),
                      span(st.get("ci_low_pct"), st.get("ci_high_pct"))]
        rows.append(tuple(cells))
        tones.append(VERDICT_TONES.get(r["retuned"]["shipped"].get("verdict")))
    if rows:
        headers = ("shape", *(name for e in EFFECTS for name in COLUMNS[e]))
        blocks.append(Table(headers=headers, rows=tuple(rows), align="l" + "lrr" * 3, tones=tuple(tones),
                            stays=tuple(COLUMNS[e][0] for e in EFFECTS),
                            fold=f"{len(rows)} shape(s): the three effects"))
    blocks.append(Para(text=retuned["reading"], tone="muted"))
    changed = (retuned.get("picks") or {}).get("changed") or []
    if changed:
        blocks.append(Table(headers=("kernel", "key", "A picked", "R picked", "closest in a sweep", "near tie"),
                            rows=tuple((c["kernel"], c["key"], c["first"], c["second"],
                                        pct(c.get("gap_pct"), signed=False),
                                        {True: "near tie", False: "no"}.get(c.get("near_tie"), "unknown"))
                                       for c in changed),
                            align="llllrl", stays=("near tie",),
                            fold=f"{len(changed)} key(s) whose pick changed under the switch"))
    return blocks


def _estimate(estimate: Mapping | None) -> str:
    if not estimate:
        return ""
    return (f" {pct(estimate.get('estimate_pct'))} "
            f"[{span(estimate.get('ci_low_pct'), estimate.get('ci_high_pct'))}]")
