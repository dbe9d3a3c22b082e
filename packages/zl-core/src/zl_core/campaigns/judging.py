"""From a campaign's shape series to the statistics' one judgement, for the adaptive
loop and the rounds report alike (so the two cannot disagree).

Which rounds of a shape count: those whose pair is comparable (:data:`OK`) and timed
by the shape's usual timer (the one most of its comparable rounds used). A round
missing on either side, or timed by another instrument, is left out of that shape
only, and the judgement notes it; the shape's other rounds are still judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TypeAlias

from zl_core import stats
from zl_core.decisions.pairing import OK, Key
from zl_core.decisions.series import FALLBACK_SEGMENT, ShapeSeries
from zl_core.foundation.errors import BadInputError
from zl_core.store.record import CampaignRecord

#: The version of the judging rules (stats.RULES), for receipts and reports.
RULES = stats.RULES
#: What a judgement is and is judged by, for callers that read them (the reports), as
#: type aliases a type checker reads too.
CampaignVerdict: TypeAlias = stats.CampaignVerdict
Plan: TypeAlias = stats.Plan

#: Fewest rounds any look can judge (re-exported for the report's drift check).
MIN_LOOK_ROUNDS = stats.MIN_LOOK_ROUNDS


def series_latencies(series: Iterable[ShapeSeries], *, fallback: bool = False
                     ) -> dict[Key, dict[int, tuple[float, float]]]:
    """``{shape key: {round: (a_ms, b_ms)}}`` of the rounds the statistics may pool.

    ``fallback``: the shapes that fell back to direct timing in every round instead
    (a different instrument, judged apart)."""
    out: dict[Key, dict[int, tuple[float, float]]] = {}
    for s in series:
        if (s.segment == FALLBACK_SEGMENT) != fallback:
            continue
        if fallback:
            out[s.key] = {r: both for r, p in zip(s.rounds, s.pairs, strict=True)
                          if p is not None and (both := p.latencies) is not None}
            continue
        usable = [(r, p) for r, p in zip(s.rounds, s.pairs, strict=True) if p is not None and p.cls == OK]
        timers = Counter(p.timer for _, p in usable)
        if not timers:
            continue
        timer = timers.most_common(1)[0][0]
        out[s.key] = {r: both for r, p in usable if p.timer == timer and (both := p.latencies) is not None}
    return out


def recorded_round_order(meta: CampaignRecord) -> str:
    """The round order a campaign.json records; campaigns from before the field alternated."""
    order = stats.ALTERNATING if meta.round_order is None else meta.round_order
    if order not in stats.ROUND_ORDERS:
        raise BadInputError(f"campaign.json records round_order {order!r}, not one of "
                            f"{', '.join(stats.ROUND_ORDERS)}; restore the file from its campaign")
    return order


def round_orders(scheme: str, rounds_done: int) -> dict[str, str]:
    """``{"r01": "AB", "r02": "BA", ...}``: which side each round ran first."""
    from zl_core.store.layout import round_name

    return {round_name(r): order for r, order in stats.round_order(scheme, range(1, rounds_done + 1)).items()}


def stats_plan(*, rounds: int | str | None, max_rounds: int | None, threshold_pct: float,
               rounds_done: int, round_order: str) -> stats.Plan:
    """The plan a campaign is judged by: fixed N rounds, or adaptive up to max_rounds."""
    if rounds in (None, "auto"):
        return stats.Plan.adaptive(max(max_rounds or rounds_done, stats.MIN_LOOK_ROUNDS),
                                   threshold_pct=threshold_pct, round_order=round_order)
    return stats.Plan.fixed(max(int(rounds), stats.MIN_LOOK_ROUNDS), threshold_pct=threshold_pct,
                            round_order=round_order)


def judge(latencies: Mapping[str, Mapping], plan: stats.Plan, rounds_done: Mapping[str, int],
          *, pair: tuple[str, str] | None = None) -> stats.CampaignVerdict:
    """Judge operators whose rounds ran in the plan's round order; ``pair`` (first side,
    second side) judges two sides of a re-tuned campaign in the order its rounds ran them."""
    last = max(rounds_done.values(), default=0)
    rounds = range(1, last + 1)
    orders = stats.round_order(plan.round_order, rounds) if pair is None else stats.pair_order(*pair, rounds)
    return stats.judge_campaign(latencies, orders, plan, rounds_done=rounds_done)
