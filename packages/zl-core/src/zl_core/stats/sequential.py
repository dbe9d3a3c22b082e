"""Sequential design: error rates that hold at every planned look up to --max-rounds.

A plan fixes its looks in advance (the rounds after which a verdict may be taken);
a fixed campaign of N rounds is the one look N. The error budget ``alpha = 1 -
confidence`` is spent over the K planned looks (:func:`spending`): half of it at
the last look, the other half in equal parts over the earlier ones; look k builds a
two-sided interval at level ``1 - alpha * w_k``. An operator that needs the whole
budget is then judged almost as a fixed campaign of that length would be, while a
large effect still stops early (docs/statistics.md compares this with equal and
proportional shares). By the union bound the K intervals cover the true effect *simultaneously* with
probability at least ``1 - alpha``, whatever the correlation between looks and whatever
stopping rule reads them, so:

- a verdict read from the interval of the look a series stopped at keeps its error
  rate, adaptive stopping included; that interval, its estimate and its MDE are all
  of that one look (the estimate always lies inside its interval);
- the one-sided p-value of that look divided by its share, ``p_k / w_k``, is a valid
  p-value at any stopping look, which the campaign's FDR step uses.

Exact group-sequential boundaries would be a little narrower but need the looks'
joint distribution under an estimated variance; this rule needs none.

Two variances per series (rules 5, docs/statistics.md §3): the **interval** and the
verdict it gives rest on the series' own rounds (``LookStat.ci_var``, ``ci_df``), so
they hold for that series whatever its siblings' noise; the **p-value** the campaign's
false-discovery step ranks rests on the pooled variance (``var``, ``df``), whose degrees
of freedom the small p-values of a large family need. A call needs both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs

# The verdict names (zl_core.foundation.verdicts), named here too for the statistics' callers.
from zl_core.foundation.verdicts import FASTER as FASTER
from zl_core.foundation.verdicts import INCONCLUSIVE as INCONCLUSIVE
from zl_core.foundation.verdicts import MIXED as MIXED
from zl_core.foundation.verdicts import NO_CHANGE as NO_CHANGE
from zl_core.foundation.verdicts import SLOWER as SLOWER

from .shape_test import LookFit, pct
from .special import tail_quantile, tail_sf

#: Fewest rounds a look can judge: two of each run order (see shape_test.MIN_ORDER_ROUNDS).
MIN_LOOK_ROUNDS = 4
#: Adaptive campaigns look after every second round from here on (order balanced).
FIRST_ADAPTIVE_LOOK = 4

CI_METHOD = ("student-t on log(A/B), run order removed, the series' own variance; p-value "
             "from a variance anchored on its operator")


def adaptive_looks(max_rounds: int) -> tuple[int, ...]:
    """The default looks of an adaptive campaign: 4, 6, 8, ... and ``max_rounds``."""
    looks = list(range(FIRST_ADAPTIVE_LOOK, max_rounds + 1, 2))
    if not looks or looks[-1] != max_rounds:
        looks.append(max_rounds)
    return tuple(looks)


#: The share of the error budget the last planned look keeps.
LAST_LOOK_SHARE = 0.5


def spending(looks: Sequence[int]) -> tuple[float, ...]:
    """Each planned look's share of the error budget: half at the last, the rest equally."""
    if len(looks) == 1:
        return (1.0,)
    early = (1.0 - LAST_LOOK_SHARE) / (len(looks) - 1)
    return (early,) * (len(looks) - 1) + (LAST_LOOK_SHARE,)


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
class LookStat:
    """One series at one look: its fit and the variance model the judgement chose."""

    fit: LookFit
    var: float  # variance of one round's log ratio, as modelled (log scale squared)
    df: float  # its degrees of freedom (own n - 2, or more where pooled)
    variance: str  # "own", "operator" (pooled on its operator alone) or "campaign"
    serial_factor: float = 1.0  # how much serial correlation widens Var(estimate)
    notes: tuple[str, ...] = ()
    # The interval's variance: the series' own rounds (None: the same as var, df)
    ci_var: float | None = None
    ci_df: float | None = None
    ci_serial_factor: float = 1.0

    @property
    def se(self) -> float:
        """Standard error of the estimate for the p-value (the pooled variance)."""
        return math.sqrt(self.var * self.fit.var_factor * self.serial_factor)

    @property
    def interval(self) -> tuple[float, float]:
        """Standard error and degrees of freedom of the interval (the series' own)."""
        if self.ci_var is None or self.ci_df is None:
            return self.se, self.df
        return math.sqrt(self.ci_var * self.fit.var_factor * self.ci_serial_factor), self.ci_df


@attrs.frozen(kw_only=True)
class SeriesTest:
    """The sequential test of one series (a shape, or an operator's per-round mean)."""

    n: int  # rounds used at the last look taken
    df: float  # degrees of freedom of that look's variance
    look: int | None  # round of the last look taken (None: none yet)
    looks_taken: int
    looks_planned: int
    estimate_pct: float  # effect at the last look, (exp(mu) - 1) * 100; + = B faster
    ci_low_pct: float  # that look's interval
    ci_high_pct: float
    confidence: float  # simultaneous over every planned look
    look_confidence: float  # of that look's own interval, 1 - alpha * w_k
    ci_method: str
    order_penalty_pct: float | None  # + = the process that runs first is slower
    sd_pct: float  # spread of log(A/B) per round as modelled for the p-value, x100
    own_sd_pct: float  # the series' own residual spread, x100
    variance: str  # the p-value's: "own", "operator", "campaign" (see LookStat), or "none"
    serial_factor: float  # the p-value's variance widening for serial correlation (1.0: none)
    tie_floored: bool  # the printed resolution, not the rounds, set the spread
    p_faster: float  # the interval's one-sided p against "effect <= +threshold", over the look's share
    p_slower: float
    p_value: float  # of "within the threshold", the band down..up (_interval_p), pooled variance
    mde_pct: float  # smallest effect that look could call on the estimate's side; inf: none
    verdict: str  # on its own, before the campaign's false-discovery control
    decided_at: int | None  # first look whose interval decided
    notes: tuple[str, ...] = ()
    ci_df: float = math.nan  # the interval's degrees of freedom (its own rounds')
    ci_sd_pct: float = math.nan  # the interval's spread per round, x100
    ci_serial_factor: float = 1.0  # the interval's widening for serial correlation


def _z(mean: float, thr: float, se: float) -> float:
    if se > 0:
        return (mean - thr) / se
    return math.copysign(math.inf, mean - thr) if mean != thr else 0.0


def judge_series(stats: Mapping[int, LookStat | None], *, looks: Sequence[int], rounds_done: int,
                 confidence: float, up: float, down: float, usable: int) -> SeriesTest:
    """Take every planned look up to ``rounds_done`` and judge the series at the last one.

    ``stats[look]`` is the series at that look (None: not testable there); ``up`` /
    ``down`` are the thresholds on the log scale, ``log(1 + t)`` and ``log(1 - t)``;
    ``usable`` is how many rounds up to ``rounds_done`` the series has.
    """
    alpha = 1.0 - confidence
    shares = spending(looks)
    taken = 0
    decided_at: int | None = None
    last: tuple[int, LookStat, float, float] | None = None  # look, stat, half-width, share
    for look, share in zip(looks, shares, strict=True):
        if look > rounds_done:
            break
        st = stats.get(look)
        if st is None or not st.fit.supported or not st.df >= 1:
            continue
        taken += 1
        se, df = st.interval
        half = tail_quantile(1.0 - alpha * share / 2.0, df) * se
        if decided_at is None and verdict_of(st.fit.mean - half, st.fit.mean + half, up, down) != INCONCLUSIVE:
            decided_at = look
        last = (look, st, half, share)
    notes: list[str] = []
    if last is None:
        return _untested(stats, looks, rounds_done, usable, confidence, alpha, shares)
    look, st, half, share = last
    f = st.fit
    lo, hi = f.mean - half, f.mean + half
    se, df = st.interval  # the one-sided p-values are the interval's: FASTER iff p_up < alpha / 2
    p_up = min(1.0, tail_sf(_z(f.mean, up, se), df) / share)
    p_down = min(1.0, tail_sf(-_z(f.mean, down, se), df) / share)
    notes.extend(st.notes)
    if f.order_effect is None:
        notes.append("every usable round ran the same side first: the run-order effect "
                     "cannot be removed")
    tie_floored = f.tie_var > 0 and (st.var if st.ci_var is None else st.ci_var) <= f.tie_var
    if tie_floored:
        notes.append("rounds agree to the latencies' printed resolution: the interval is "
                     "as wide as that resolution allows")
    return SeriesTest(
        n=f.n, df=st.df, look=look, looks_taken=taken, looks_planned=len(looks),
        estimate_pct=pct(f.mean), ci_low_pct=pct(lo), ci_high_pct=pct(hi), confidence=confidence,
        look_confidence=1.0 - alpha * share, ci_method=_method(looks, alpha),
        order_penalty_pct=None if f.order_effect is None else pct(f.order_effect),
        sd_pct=math.sqrt(st.var) * 100.0, own_sd_pct=math.sqrt(f.own_var) * 100.0,
        variance=st.variance, serial_factor=st.serial_factor, tie_floored=tie_floored,
        p_faster=p_up, p_slower=p_down, p_value=_interval_p(f.mean, st.se, st.df, up, down, share),
        mde_pct=pct(up + half) if f.mean >= 0 else pct(down - half), verdict=verdict_of(lo, hi, up, down), decided_at=decided_at,
        notes=tuple(notes), ci_df=df,
        ci_sd_pct=math.sqrt(st.var if st.ci_var is None else st.ci_var) * 100.0,
        ci_serial_factor=st.serial_factor if st.ci_var is None else st.ci_serial_factor)


def _interval_p(mean: float, se: float, df: float, up: float, down: float, share: float) -> float:
    """The p-value of "the effect lies within the threshold" (``down <= mu <= up``), the
    hypothesis the campaign's false-discovery step tests: the largest chance, over every
    effect inside the band, of an estimate at least as far from the band's centre as this
    one. That chance grows with the effect's distance from the centre (a symmetric,
    unimodal t), so it is taken at the band's edge: the tail beyond the estimate plus the
    far tail beyond its mirror image. Beyond the band it is about one one-sided p-value,
    half the doubled one (``2 * min(p_faster, p_slower)``) that tests a point, not a band.
    Divided by the look's share of the error budget, like the one-sided ones."""
    centre, half = (up + down) / 2.0, (up - down) / 2.0
    distance = abs(mean - centre)
    if not se > 0:
        return 0.0 if distance > half else 1.0
    return min(1.0, (tail_sf((distance - half) / se, df) + tail_sf((distance + half) / se, df)) / share)


def _method(looks: Sequence[int], alpha: float) -> str:
    if len(looks) == 1:
        return f"{CI_METHOD}; one look at {alpha:.3g}"
    return f"{CI_METHOD}; {len(looks)} looks share {alpha:.3g}, half of it at the last"


def _untested(stats: Mapping[int, LookStat | None], looks: Sequence[int], rounds_done: int,
              usable: int, confidence: float, alpha: float, shares: Sequence[float]) -> SeriesTest:
    notes: list[str] = []
    reached = [x for x in looks if x <= rounds_done]
    seen = [st for st in (stats.get(x) for x in reached) if st is not None]
    unsupported = [st for st in seen if not st.fit.supported]
    if usable < MIN_LOOK_ROUNDS:
        notes.append(f"{usable} usable round(s); a verdict needs at least {MIN_LOOK_ROUNDS}, "
                     "two with each side first")
    elif unsupported:
        notes.append(unsupported[-1].fit.support_note())
    elif not reached:
        notes.append(f"no planned look yet: {rounds_done} round(s) done, first look at {looks[0]}")
    else:
        notes.append("no look could estimate the spread of its rounds")
    last = seen[-1] if seen else None
    f = last.fit if last else None
    return SeriesTest(
        n=f.n if f else usable, df=0, look=None, looks_taken=0, looks_planned=len(looks),
        estimate_pct=pct(f.mean) if f else math.nan, ci_low_pct=math.nan, ci_high_pct=math.nan,
        confidence=confidence, look_confidence=1.0 - alpha * shares[-1],
        ci_method=_method(looks, alpha),
        order_penalty_pct=None if not f or f.order_effect is None else pct(f.order_effect),
        sd_pct=math.nan, own_sd_pct=math.sqrt(f.own_var) * 100.0 if f and f.df >= 1 else math.nan,
        variance="none", serial_factor=1.0, tie_floored=False, p_faster=1.0, p_slower=1.0,
        p_value=1.0, mde_pct=math.inf, verdict=INCONCLUSIVE, decided_at=None, notes=tuple(notes))
