"""Sequential design: error rates that hold at every planned look up to --max-rounds.

A plan fixes its looks in advance (the rounds after which a verdict may be taken);
a fixed campaign of N rounds is the one look N. The error budget ``alpha = 1 -
confidence`` is spent in equal parts over the K planned looks: look k builds a
two-sided interval at level ``1 - alpha / K``. By the union bound the K intervals
cover the true effect *simultaneously* with probability at least ``1 - alpha``,
whatever the correlation between looks and whatever stopping rule reads them, so:

- the reported interval is the running intersection of the looks taken so far;
- FASTER / SLOWER / NO_CHANGE read that interval, so each holds its error rate at
  any look, adaptive stopping included, and a decided series stays decided;
- the repeated p-value ``min_k p_k * K`` (one-sided, against each threshold) is a
  valid p-value at any stopping look, which the campaign's FDR step uses.

Exact group-sequential boundaries would be a little narrower but need the looks'
joint distribution under an estimated variance; this rule needs none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from .shape_test import LookFit, Observation, fit, pct
from .special import t_cdf, t_quantile, t_sf

FASTER = "FASTER"
SLOWER = "SLOWER"
NO_CHANGE = "NO_CHANGE"
INCONCLUSIVE = "INCONCLUSIVE"
# Operator level only: the operator's calls go both ways.
MIXED = "MIXED"

#: Fewest rounds a look can judge: two parameters (effect, run order) and one degree
#: of freedom for the spread.
MIN_LOOK_ROUNDS = 3
#: Adaptive campaigns look after every second round from here on (order balanced).
FIRST_ADAPTIVE_LOOK = 4

CI_METHOD = "student-t on log(A/B), run order removed"


def adaptive_looks(max_rounds: int) -> tuple[int, ...]:
    """The default looks of an adaptive campaign: 4, 6, 8, ... and ``max_rounds``."""
    looks = list(range(FIRST_ADAPTIVE_LOOK, max_rounds + 1, 2))
    if not looks or looks[-1] != max_rounds:
        looks.append(max_rounds)
    return tuple(looks)


def verdict_of(lo: float, hi: float, up: float, down: float) -> str:
    """Verdict of an interval [lo, hi] against the log thresholds down < 0 <= up."""
    if not lo <= hi:  # no look yet (nan) or looks that do not overlap
        return INCONCLUSIVE
    if lo > up:
        return FASTER
    if hi < down:
        return SLOWER
    if down <= lo and hi <= up:
        return NO_CHANGE
    return INCONCLUSIVE


@attrs.frozen(kw_only=True)
class SeriesTest:
    """The sequential test of one series (a shape, or an operator's per-round mean)."""

    n: int  # rounds used at the last look taken
    df: int
    look: int | None  # round of the last look taken (None: none yet)
    looks_taken: int
    looks_planned: int
    estimate_pct: float  # effect at the last look, (exp(mu) - 1) * 100; + = B faster
    ci_low_pct: float  # running intersection of the looks' intervals
    ci_high_pct: float
    confidence: float  # simultaneous over every planned look
    look_confidence: float  # of each look's own interval, 1 - alpha / K
    ci_method: str
    order_penalty_pct: float | None  # + = the process that runs first is slower
    sd_pct: float  # residual spread of log(A/B) per round, x100
    tie_floored: bool  # the printed resolution, not the rounds, set the spread
    p_faster: float  # repeated one-sided p against "effect <= +threshold"
    p_slower: float
    p_value: float  # two-sided: min(1, 2 * min(p_faster, p_slower))
    mde_pct: float  # smallest effect a look of this series could call; inf: none
    verdict: str  # on its own, before the campaign's false-discovery control
    decided_at: int | None  # first look whose interval decided
    notes: tuple[str, ...] = ()


def _z(mean: float, thr: float, se: float) -> float:
    if se > 0:
        return (mean - thr) / se
    return math.copysign(math.inf, mean - thr) if mean != thr else 0.0


def judge_series(obs: Sequence[Observation], *, looks: Sequence[int], rounds_done: int,
                 confidence: float, up: float, down: float) -> SeriesTest:
    """Take every planned look up to ``rounds_done`` and judge the series.

    ``up`` / ``down`` are the thresholds on the log scale: ``log(1 + t)`` and
    ``log(1 - t)``. Observations past ``rounds_done`` are ignored.
    """
    alpha = 1.0 - confidence
    k_planned = len(looks)
    w = 1.0 / k_planned
    look_alpha = alpha * w
    lo, hi = -math.inf, math.inf
    p_up = p_down = 1.0
    decided_at: int | None = None
    last: tuple[int, LookFit] | None = None
    min_half = math.inf
    taken = 0
    notes: list[str] = []
    for look in looks:
        if look > rounds_done:
            break
        f = fit([o for o in obs if o.round_no <= look])
        if f.df < 1:
            continue
        taken += 1
        half = t_quantile(1.0 - look_alpha / 2.0, f.df) * f.se
        lo, hi = max(lo, f.mean - half), min(hi, f.mean + half)
        p_up = min(p_up, t_sf(_z(f.mean, up, f.se), f.df) / w)
        p_down = min(p_down, t_cdf(_z(f.mean, down, f.se), f.df) / w)
        min_half = min(min_half, half)
        last = (look, f)
        if decided_at is None and verdict_of(lo, hi, up, down) != INCONCLUSIVE:
            decided_at = look
    used = [o for o in obs if o.round_no <= rounds_done]
    if last is None:
        f = fit(used)
        first = next((x for x in looks if x > rounds_done), None)
        if len(used) < MIN_LOOK_ROUNDS:
            notes.append(f"{len(used)} usable round(s); a look needs at least {MIN_LOOK_ROUNDS}")
        elif first is not None:
            notes.append(f"no planned look yet: {rounds_done} round(s) done, first look at {first}")
        lo = hi = math.nan
    else:
        f = last[1]
        if lo > hi:
            notes.append("the looks' intervals do not overlap: the rounds are inconsistent "
                         "(drift or disturbed processes?); no verdict")
    if f.order_effect is None and len(used) >= 2:
        notes.append("every usable round ran the same side first: the run-order effect "
                     "cannot be removed")
    if f.tie_floored:
        notes.append("rounds agree to the latencies' printed resolution: the interval is "
                     "as wide as that resolution allows")
    verdict = verdict_of(lo, hi, up, down)
    return SeriesTest(
        n=f.n, df=f.df, look=last[0] if last else None, looks_taken=taken,
        looks_planned=k_planned, estimate_pct=pct(f.mean), ci_low_pct=pct(lo),
        ci_high_pct=pct(hi), confidence=confidence, look_confidence=1.0 - look_alpha,
        ci_method=f"{CI_METHOD}; {k_planned} look(s) share {alpha:.3g}",
        order_penalty_pct=None if f.order_effect is None else pct(f.order_effect),
        sd_pct=f.sd * 100.0, tie_floored=f.tie_floored,
        p_faster=p_up, p_slower=p_down, p_value=min(1.0, 2.0 * min(p_up, p_down)),
        mde_pct=pct(up + min_half), verdict=verdict, decided_at=decided_at,
        notes=tuple(notes))
