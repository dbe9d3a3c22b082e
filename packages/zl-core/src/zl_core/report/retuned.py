"""The three effects of a re-tuned campaign (``zl ab --retuned``), per shape and operator.

*Pinned* is side B against side A (the rounds report's own verdicts: B replays A's
autotune picks, so only the switch differs). *Shipped* is side R against side A: R runs
B's environment with its own picks, what users get once the switch lands and the
autotuner re-tunes. *The autotuner's part* is R against B: both switch on, only the picks
differ. Each is judged by the campaign's one judgement (``campaigns.judging``: the same
statistics, each effect with its own campaign false-discovery step over the campaign's
operators), with every pair of sides in the order its rounds ran them
(``stats.order.RETUNED_CYCLE``).

The keys whose pick changed (R's round-1 record against A's) are read against side A's
own picks recorded twice (``<op>/r01/A`` against ``<op>/r01/A2``): how often a tuner picks
the same config again with nothing changed. Near ties are named (``decisions.picks``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zl_core.campaigns.judging import CampaignVerdict, Plan, judge, series_latencies
from zl_core.decisions.pairing import pair_rows
from zl_core.decisions.picks import PickComparison, compare_picks
from zl_core.decisions.series import shape_series
from zl_core.plugins.cell_rows import read_cell, read_picks
from zl_core.store.layout import REPICK, RETUNED, CampaignLayout, parse_round

from .headline import verdict_estimate

#: The effects, by the pair of sides each compares (first, second): second against first.
#: (campaigns.ab_task.EFFECT_PAIRS, the pairs the adaptive stop judges, in this order.)
EFFECTS = {"pinned": ("A", "B"), "shipped": ("A", RETUNED), "autotune": ("B", RETUNED)}
LABELS = {"pinned": "pinned (B vs A)", "shipped": "shipped (R vs A)", "autotune": "autotuner's part (R vs B)"}


def judge_effects(layout: CampaignLayout, ops: Mapping[str, tuple[int, ...]], judged_by: Plan
                  ) -> dict[str, CampaignVerdict]:
    """The shipped and autotuner's effects of ``ops`` (operator -> its complete rounds),
    each one judgement of the whole campaign, as the pinned one is."""
    out = {}
    for effect in ("shipped", "autotune"):
        first, second = EFFECTS[effect]
        latencies = {}
        for op, rounds in ops.items():
            pairs = {r: pair_rows(read_cell(layout.cell_dir(op, first, r)).rows,
                                  read_cell(layout.cell_dir(op, second, r)).rows) for r in rounds}
            latencies[op] = series_latencies(shape_series(pairs))
        out[effect] = judge(latencies, judged_by, {op: max(r) for op, r in ops.items()},
                            pair=(first, second))
    return out


def shape_effects(row: Mapping, verdicts: Mapping[str, CampaignVerdict], op: str, key) -> dict:
    """One shape row's ``retuned`` object: each effect's verdict and stats (pinned's are the
    row's own), and side R's latency per round (None where it has no usable pair)."""
    out: dict = {"pinned": {"verdict": row.get("verdict"), "stats": row.get("stats")}}
    for effect, verdict in verdicts.items():
        shape = next((s for s in verdict.operator(op).shapes if s.key == key), None)
        out[effect] = {"verdict": shape.verdict if shape else None,
                       "stats": shape.to_json() if shape else None}
        if effect == "shipped":
            timed = dict(shape.latencies) if shape else {}
            out["r_ms"] = [timed[r][1] if r in timed else None for r in map(parse_round, row["rounds"])]
    return out


def operator_effects(layout: CampaignLayout, op: str, operator: Mapping,
                     verdicts: Mapping[str, CampaignVerdict], threshold_pct: float) -> dict:
    """An operator's ``retuned`` object: each effect's verdict, text and estimate, the keys
    whose pick changed under the switch and side A's own pick reproduction."""
    effects = {"pinned": {"verdict": operator["verdict"], "text": operator["text"],
                          "estimate": operator.get("estimate")}}
    for effect, verdict in verdicts.items():
        judged = verdict.operator(op)
        effects[effect] = {"verdict": judged.verdict, "text": judged.text,
                           "estimate": verdict_estimate(judged.to_json(), [s.to_json() for s in judged.shapes])}
    a, r, again = (read_picks(layout.cell_dir(op, side, 1)) for side in ("A", RETUNED, REPICK))
    picks = compare_picks(a, r, threshold_pct=threshold_pct) if a is not None and r is not None else None
    noise = compare_picks(a, again, threshold_pct=threshold_pct) if a is not None and again is not None else None
    return {**effects, "picks": picks.to_json() if picks else None,
            "pick_noise": noise.to_json() if noise else None, "reading": reading(picks, noise)}


def reading(picks: PickComparison | None, noise: PickComparison | None) -> str:
    """One line: the picks that changed under the switch, against side A's own."""
    if picks is None:
        return "no autotune picks recorded on side A or R: the autotuner's part has no keys to name"
    ties = f" ({picks.near_ties} near tie(s))" if picks.near_ties else ""
    text = f"picks changed under the switch on {len(picks.changed)} of {picks.keys} key(s){ties}"
    if noise is None:
        return text + "; side A's second record is missing, so there is no pick-noise reference"
    same = f"side A's own picks reproduced on {noise.same} of {noise.keys} key(s) recorded twice"
    if noise.changed:
        same += f" ({len(noise.changed)} changed, {noise.near_ties} of them near tie(s))"
    return f"{text}; {same}"


def campaign_effects(operators: Sequence[Mapping], verdicts: Mapping[str, CampaignVerdict]) -> dict:
    """``summary.retuned``: each effect's campaign step and the picks summed over operators."""
    fdr = {effect: {"level": v.fdr_level, "tested": v.tested, "selected": v.selected, "text": v.fdr_text}
           for effect, v in verdicts.items()}
    picks = [o["retuned"]["picks"] for o in operators if o.get("retuned") and o["retuned"]["picks"]]
    noise = [o["retuned"]["pick_noise"] for o in operators if o.get("retuned") and o["retuned"]["pick_noise"]]

    def total(items: list[Mapping]) -> dict:
        return {"keys": sum(p["keys"] for p in items), "same": sum(p["same"] for p in items),
                "changed": sum(len(p["changed"]) for p in items),
                "near_ties": sum(p["near_ties"] for p in items)}

    changed, again = total(picks), total(noise)
    text = (f"picks changed under the switch on {changed['changed']} of {changed['keys']} key(s) "
            f"({changed['near_ties']} near tie(s)); side A's own picks reproduced on {again['same']} "
            f"of {again['keys']} key(s) recorded twice ({again['changed']} changed, "
            f"{again['near_ties']} near tie(s))")
    return {"effects": list(LABELS), "labels": dict(LABELS), "fdr": fdr, "picks": changed,
            "pick_noise": again, "text": text}
