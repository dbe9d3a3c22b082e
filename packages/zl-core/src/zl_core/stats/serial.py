"""Serially correlated rounds: detect them, and widen the interval instead of calling more.

The per-shape test treats rounds as independent. A slowly varying state of one side (a
cache that fills, a clock governor with memory) makes neighbouring rounds alike; then
the residual spread understates how much the mean can wander, and false calls grow with
rounds (AR(1) with rho 0.8: 10.6%, 14.4% and 17.4% at the threshold after 6, 10 and 20
rounds, where 2.5% is allowed). Six rounds cannot estimate a correlation, but the
shapes of a noise class can together, with the small-sample bias of residual
autocorrelation removed exactly:

- For a shape's rounds ``r_1 < ... < r_n`` with their orders, the residuals are
  ``e = M y`` (``M`` removes the two order-group means). Under AR(1) noise of
  correlation ``rho`` between rounds ``|r_i - r_j|`` apart, ``Sigma_ij =
  rho^|r_i - r_j|``, ``E[e'Ae] = sigma^2 tr(M A M Sigma)`` (``A``: half the sum of
  neighbouring products) and ``E[e'e] = sigma^2 tr(M Sigma)``.
- Over the class, the ratio of the sums
  ``sum e'Ae / sum e'e`` is tested against its value at rho = 0 (one-sided, at 1%,
  with the exact Gaussian null variance of the quadratic forms); if the correlation is
  there, rho is the value whose expected ratio matches it (a ratio of sums, not a mean
  of ratios, which is biased low at few rounds). Then each shape's spread is read as
  ``sse / tr(M Sigma)`` (unbiased for sigma^2) with ``tr(M Sigma)^2 / tr((M Sigma)^2)``
  degrees of freedom (Satterthwaite: correlated rounds carry less information about
  the spread, which matters to the pooling), and its effect estimate's variance is
  ``sigma^2 * c' Sigma c`` instead of ``sigma^2 * c'c``. Without the evidence, nothing
  changes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache

import attrs

from .special import norm_sf

#: One-sided level of the test for positive serial correlation in a class.
DETECT_ALPHA = 0.01
#: The largest correlation the model fits (beyond it rounds carry almost no information).
MAX_RHO = 0.95

Pattern = tuple[tuple[int, ...], tuple[int, ...]]  # (rounds, orders +1/-1)


@attrs.frozen(kw_only=True)
class Residuals:
    cls: object
    rounds: tuple[int, ...]
    orders: tuple[int, ...]
    e: tuple[float, ...]  # residuals in round order


@attrs.frozen
class _Design:
    m: tuple[tuple[float, ...], ...]  # residual maker
    b: tuple[tuple[float, ...], ...]  # M A M
    c: tuple[float, ...]  # contrast of the effect estimate
    df: int
    tr_b: float
    tr_b2: float


@lru_cache(maxsize=512)
def _design(pattern: Pattern) -> _Design:
    rounds, orders = pattern
    n = len(rounds)
    size = {o: sum(1 for x in orders if x == o) for o in (1, -1)}
    m = [[(1.0 if i == j else 0.0) - (1.0 / size[orders[i]] if orders[i] == orders[j] else 0.0)
          for j in range(n)] for i in range(n)]
    a = [[0.5 if abs(i - j) == 1 else 0.0 for j in range(n)] for i in range(n)]
    ma = _mul(m, a)
    b = _mul(ma, m)
    c = tuple(1.0 / (2.0 * size[o]) for o in orders)
    return _Design(m=_frozen(m), b=_frozen(b), c=c, df=n - 2, tr_b=sum(b[i][i] for i in range(n)),
                   tr_b2=sum(b[i][j] * b[j][i] for i in range(n) for j in range(n)))


def _mul(x: list[list[float]], y: list[list[float]]) -> list[list[float]]:
    n = len(x)
    return [[sum(x[i][k] * y[k][j] for k in range(n)) for j in range(n)] for i in range(n)]


def _frozen(x: list[list[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in x)


def _weighted(mat: Sequence[Sequence[float]], rounds: Sequence[int], rho: float) -> float:
    """sum_ij mat_ij * rho^|r_i - r_j|, i.e. tr(mat Sigma) for a symmetric mat."""
    n = len(rounds)
    return sum(mat[i][j] * rho ** abs(rounds[i] - rounds[j]) for i in range(n) for j in range(n))


@attrs.frozen(kw_only=True)
class ClassSerial:
    rho: float  # 0.0: no evidence of serial correlation
    z: float  # the test statistic (standard normal at rho = 0)
    p: float
    series: int


class Serial:
    """The serial correlation of every noise class at one look."""

    def __init__(self, residuals: Iterable[Residuals]):
        groups: dict[object, list[tuple[Pattern, float, float]]] = defaultdict(list)
        for r in residuals:
            if len(r.e) < 4:
                continue
            lag = sum(r.e[i] * r.e[i + 1] for i in range(len(r.e) - 1))
            groups[r.cls].append(((r.rounds, r.orders), lag, sum(x * x for x in r.e)))
        self._classes = {cls: self._fit(items) for cls, items in groups.items()}

    @staticmethod
    def _fit(items: list[tuple[Pattern, float, float]]) -> ClassSerial:
        designs = [(_design(p), p) for p, _, _ in items]
        lag = sum(x for _, x, _ in items)
        sq = sum(x for _, _, x in items)
        df = sum(d.df for d, _ in designs)
        c = sum(d.tr_b for d, _ in designs) / df  # the ratio's value at rho = 0
        # Var(e'(B - cM)e) = 2 sigma^4 tr((B - cM)^2) for Gaussian rounds; sigma^2 ~ sq / df
        var = 2.0 * sum(d.tr_b2 - 2.0 * c * d.tr_b + c * c * d.df for d, _ in designs)
        z = (lag - c * sq) / (sq / df * math.sqrt(var)) if var > 0 and sq > 0 else 0.0
        p = norm_sf(z)
        if p >= DETECT_ALPHA or not sq > 0:
            return ClassSerial(rho=0.0, z=z, p=p, series=len(items))
        observed = lag / sq

        def expected(rho: float) -> float:
            return (sum(_weighted(d.b, p[0], rho) for d, p in designs)
                    / sum(_weighted(d.m, p[0], rho) for d, p in designs))

        lo, hi = 0.0, MAX_RHO
        if expected(hi) <= observed:
            return ClassSerial(rho=hi, z=z, p=p, series=len(items))
        for _ in range(40):
            mid = (lo + hi) / 2.0
            if expected(mid) < observed:
                lo = mid
            else:
                hi = mid
        return ClassSerial(rho=(lo + hi) / 2.0, z=z, p=p, series=len(items))

    def of(self, cls: object) -> ClassSerial | None:
        return self._classes.get(cls)

    def rho(self, cls: object) -> float:
        fit = self._classes.get(cls)
        return fit.rho if fit is not None else 0.0


@attrs.frozen(kw_only=True)
class Moments:
    """What AR(1) rounds of correlation rho do to one series' spread and estimate."""

    tr_ms: float  # E[sse] / sigma^2
    df: float  # Satterthwaite degrees of freedom of sse
    widen: float  # Var(estimate) over sigma^2 * c'c


@lru_cache(maxsize=4096)
def moments(rounds: tuple[int, ...], orders: tuple[int, ...], rho: float) -> Moments:
    d = _design((rounds, orders))
    n = len(rounds)
    sigma = [[rho ** abs(rounds[i] - rounds[j]) for j in range(n)] for i in range(n)]
    ms = _mul([list(row) for row in d.m], sigma)
    tr_ms = sum(ms[i][i] for i in range(n))
    tr_ms2 = sum(ms[i][j] * ms[j][i] for i in range(n) for j in range(n))
    c_sigma_c = sum(d.c[i] * d.c[j] * sigma[i][j] for i in range(n) for j in range(n))
    return Moments(tr_ms=tr_ms, df=tr_ms * tr_ms / tr_ms2 if tr_ms2 > 0 else float(d.df),
                   widen=c_sigma_c / sum(x * x for x in d.c))
