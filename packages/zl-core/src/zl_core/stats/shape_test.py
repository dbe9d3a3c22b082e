"""The per-shape test at one look: mean log ratio with the run-order effect removed.

Round *i* of a shape gives ``y_i = log(A_i / B_i)`` and its order ``o_i`` (+1 when
side A ran first in that round, -1 when B did). Rounds alternate order, so the
model ``y_i = mu + gamma * o_i + e_i`` separates the switch's effect ``mu`` from a
first-process penalty ``gamma`` (the process that runs first in a round is slower
or faster by ``exp(gamma)``): ``mu`` is the mean of the two order groups' means,
``gamma`` half their difference, and the residual spread within the groups,
with ``n - 2`` degrees of freedom, gives a Student-t interval for ``mu``. Every
round adds a degree of freedom and shrinks the standard error, so power rises with
rounds. With one order only (a shape missing from every other round) ``gamma``
cannot be estimated and the plain mean is used, with a note.

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


@attrs.frozen(kw_only=True)
class LookFit:
    n: int
    df: int  # residual degrees of freedom; 0 = no interval at this look
    mean: float  # estimate of mu (log scale)
    se: float  # its standard error
    order_effect: float | None  # gamma (log scale); None = one order only
    sd: float  # residual standard deviation used (log scale)
    tie_floored: bool  # the tie floor, not the residuals, set sd


def fit(obs: Sequence[Observation]) -> LookFit:
    """Least-squares fit of ``y = mu + gamma * order`` (or ``y = mu`` with one order)."""
    n = len(obs)
    first_a = [o.y for o in obs if o.order > 0]
    first_b = [o.y for o in obs if o.order < 0]
    if first_a and first_b:
        ma, mb = sum(first_a) / len(first_a), sum(first_b) / len(first_b)
        mean, gamma = (ma + mb) / 2.0, (ma - mb) / 2.0
        sse = sum((y - ma) ** 2 for y in first_a) + sum((y - mb) ** 2 for y in first_b)
        df = n - 2
        var_factor = (1.0 / len(first_a) + 1.0 / len(first_b)) / 4.0
    else:
        mean = sum(o.y for o in obs) / n if n else math.nan
        gamma = None
        sse = sum((o.y - mean) ** 2 for o in obs)
        df = n - 1
        var_factor = 1.0 / n if n else math.nan
    if df < 1:
        return LookFit(n=n, df=max(df, 0), mean=mean, se=math.nan, order_effect=gamma,
                       sd=math.nan, tie_floored=False)
    residual_var = sse / df
    floor = sum(o.tie_var for o in obs) / n
    tie_floored = floor > residual_var
    var = max(residual_var, floor)
    return LookFit(n=n, df=df, mean=mean, se=math.sqrt(var * var_factor), order_effect=gamma,
                   sd=math.sqrt(var), tie_floored=tie_floored)


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
