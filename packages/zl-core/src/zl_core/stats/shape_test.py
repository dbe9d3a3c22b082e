"""The per-shape test at one look: mean log ratio with the run-order effect removed.

Round *i* of a shape gives ``y_i = log(A_i / B_i)`` and its order ``o_i`` (+1 when
side A ran first in that round, -1 when B did). Rounds alternate order, so the
model ``y_i = mu + gamma * o_i + e_i`` separates the switch's effect ``mu`` from a
first-process penalty ``gamma`` (the process that runs first in a round is slower
or faster by ``exp(gamma)``): ``mu`` is the mean of the two order groups' means,
``gamma`` half their difference, and the residual spread within the groups,
with ``n - 2`` degrees of freedom, gives a Student-t interval for ``mu``. Every
round adds a degree of freedom and shrinks the standard error, so power rises with
rounds. A look needs at least two rounds of each order (:data:`MIN_ORDER_ROUNDS`);
how the residual variance is then modelled (pooled across shapes, widened for serial
correlation) is :mod:`.judge`'s, from :mod:`.pooling` and :mod:`.serial`.

Descriptive figures (median delta, per-round range, sign agreement, side spread)
are reported beside the test and decide nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs


@attrs.frozen(kw_only=True)
class Observation:
    """One round of one series: its number, order, log ratio and tie variance."""

    round_no: int
    order: int  # +1: A ran first, -1: B ran first
    y: float  # log(A / B)
    tie_var: float  # variance of y that the printed resolution alone gives


#: Fewest rounds of each run order a look needs. With one A-first round its residual is
#: identically zero, so a disturbed cell there adds no width and one process decides.
MIN_ORDER_ROUNDS = 2


@attrs.frozen(kw_only=True)
class LookFit:
    """The least-squares fit of one series at one look, before any variance model."""

    n: int
    a_first: int  # rounds with A first
    b_first: int
    mean: float  # estimate of mu (log scale)
    order_effect: float | None  # gamma (log scale); None = one order only
    sse: float  # residual sum of squares
    df: int  # residual degrees of freedom (0: none)
    var_factor: float  # Var(mean) / sigma^2 under independent rounds
    tie_var: float  # variance of y the printed resolution alone gives
    rounds: tuple[int, ...]
    orders: tuple[int, ...]
    residuals: tuple[float, ...]

    @property
    def supported(self) -> bool:
        """Enough rounds of each order to separate effect, order and spread."""
        return self.a_first >= MIN_ORDER_ROUNDS and self.b_first >= MIN_ORDER_ROUNDS

    @property
    def own_var(self) -> float:
        """The series' own residual variance, never below its tie variance."""
        return max(self.sse / self.df, self.tie_var) if self.df >= 1 else math.nan

    def support_note(self) -> str:
        return (f"{self.a_first} round(s) ran A first and {self.b_first} B first; a verdict needs "
                f"at least {MIN_ORDER_ROUNDS} of each, so that no single process decides it")


def fit(obs: Sequence[Observation]) -> LookFit:
    """Least-squares fit of ``y = mu + gamma * order`` (or ``y = mu`` with one order)."""
    obs = sorted(obs, key=lambda o: o.round_no)
    n = len(obs)
    first_a = [o.y for o in obs if o.order > 0]
    first_b = [o.y for o in obs if o.order < 0]
    if first_a and first_b:
        ma, mb = sum(first_a) / len(first_a), sum(first_b) / len(first_b)
        mean, gamma = (ma + mb) / 2.0, (ma - mb) / 2.0
        residuals = tuple(o.y - (ma if o.order > 0 else mb) for o in obs)
        df = n - 2
        var_factor = (1.0 / len(first_a) + 1.0 / len(first_b)) / 4.0
    else:
        mean = sum(o.y for o in obs) / n if n else math.nan
        gamma = None
        residuals = tuple(o.y - mean for o in obs)
        df = n - 1
        var_factor = 1.0 / n if n else math.nan
    return LookFit(n=n, a_first=len(first_a), b_first=len(first_b), mean=mean, order_effect=gamma,
                   sse=sum(r * r for r in residuals), df=max(df, 0), var_factor=var_factor,
                   tie_var=sum(o.tie_var for o in obs) / n if n else 0.0,
                   rounds=tuple(o.round_no for o in obs), orders=tuple(o.order for o in obs),
                   residuals=residuals)


# --------------------------------------------------------------------------- description


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    if n == 0:
        return math.nan
    return float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def spread_pct(values: Sequence[float]) -> float:
    """(max - min) / median * 100 of one side's latencies over the rounds."""
    if not values:
        return math.nan
    med = median(values)
    return (max(values) - min(values)) / med * 100.0 if med > 0 else math.nan


def sign_test_p(pos: int, neg: int) -> float:
    """Exact two-sided sign test; zero deltas are ties and are dropped."""
    m = pos + neg
    if m == 0:
        return 1.0
    x = max(pos, neg)
    upper = sum(math.comb(m, i) for i in range(x, m + 1)) / 2 ** m
    return min(1.0, 2.0 * upper)


def pct(y: float) -> float:
    """A log ratio as a percent delta, ``(exp(y) - 1) * 100``; inf beyond float range."""
    if math.isnan(y):
        return math.nan
    return math.inf if y > 700.0 else math.expm1(y) * 100.0
