"""Statistics of A/B campaigns: per-shape tests, sequential looks, campaign FDR.

One entry point judges a campaign, for the adaptive loop and the report alike:
:func:`judge_campaign` (plain latencies + :class:`Plan` -> :class:`CampaignVerdict`),
with :func:`adaptive_stop` reading one operator of it. docs/statistics.md explains
every rule and shows the simulations (:mod:`zl_core.stats.simulate`) behind its figures.

Modules, one job each: ``special`` (Student's t), ``validate`` (degenerate inputs),
``shape_test`` (one look of one series), ``shared`` (how much of a process's noise an
operator's shapes share), ``pooling`` (variances anchored on their own operator),
``serial`` (serially correlated rounds), ``looks`` (every series at every look, its
variance chosen), ``sequential`` (looks and error spending), ``order`` (the order of each
round's sides), ``fdr`` (campaign false-discovery control), ``records`` (plan and
results), ``judge`` (the one judgement), ``simulate``, ``simulate_campaigns``,
``simulate_noise`` and ``simulate_company`` (seeded synthetic campaigns).
"""

from .judge import adaptive_stop, judge_campaign
from .order import (
    ALTERNATING,
    COUNTERBALANCED,
    ROUND_ORDERS,
    alternating_order,
    pair_order,
    retuned_sides,
    round_order,
)
from .records import RULES, CampaignVerdict, OperatorVerdict, Plan, ShapeVerdict
from .sequential import (
    CI_METHOD,
    FASTER,
    FIRST_ADAPTIVE_LOOK,
    INCONCLUSIVE,
    MIN_LOOK_ROUNDS,
    MIXED,
    NO_CHANGE,
    SLOWER,
    SeriesTest,
    adaptive_looks,
    spending,
)

__all__ = [
    "ALTERNATING", "CI_METHOD", "COUNTERBALANCED", "FASTER", "FIRST_ADAPTIVE_LOOK", "INCONCLUSIVE",
    "MIN_LOOK_ROUNDS", "MIXED", "NO_CHANGE", "ROUND_ORDERS", "RULES", "SLOWER", "CampaignVerdict",
    "OperatorVerdict", "Plan", "SeriesTest", "ShapeVerdict", "adaptive_looks", "adaptive_stop",
    "alternating_order", "judge_campaign", "pair_order", "retuned_sides", "round_order", "spending",
]
