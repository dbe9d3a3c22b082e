"""Serially correlated rounds, per operator: detect them, and widen instead of calling more.

The per-shape test treats rounds as independent. A slowly varying state of one side (a
clock governor with memory, a cache that fills) makes neighbouring rounds alike; then the
residual spread understates how far the mean can wander, and false calls grow with rounds
(AR(1) with rho 0.8: 10.6%, 14.4% and 17.4% at the threshold after 6, 10 and 20 rounds,
where 2.5% is allowed). Such a state belongs to a side's *process*, so it is shared by
every shape of the operator, each of which adds noise of its own:

    Cov(y_i) = sigma_i^2 (lam R(rho) + (1 - lam) I),   R(rho)_rs = rho^|r - s|,

with ``lam`` the share of a shape's variance in the shared state. It is modelled per
operator, from the operator's own rounds only, so an operator's interval never depends on
which other operators share its campaign:

- ``lam`` is the shapes' residual correlation (:mod:`.shared`); a lone series has 1.
- **Detection**: the operator's sum over its shapes of the lag-1 products of residuals
  ``sum e'Ae`` against ``c * sum e'e``, ``c`` its value without correlation. Its null
  variance is exact for Gaussian rounds of one series (``2 tr((B - cM)^2)``, ``B = MAM``)
  and is multiplied by ``1 + (m - 1) r^2`` for m shapes whose residuals correlate by
  ``r^2`` (independent shapes add information; perfectly shared ones add none). One-sided
  at :data:`DETECT_ALPHA`.
- **rho** is the value whose expected ratio ``sum tr(B Sigma) / sum tr(M Sigma)`` under
  that model matches the observed ``sum e'Ae / sum e'e`` (exact given rho and lam, so the
  small-sample bias of residual autocorrelation is removed).
- Each series' spread is then ``sse / tr(M Sigma)`` with Satterthwaite's
  ``tr(M Sigma)^2 / tr((M Sigma)^2)`` degrees of freedom, and its estimate's variance
  ``sigma^2 c' Sigma c`` instead of ``sigma^2 c'c`` (``serial_factor``). The operator's
  per-round mean has ``lam_mean = lam / (lam + (1 - lam) / m)``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from functools import lru_cache
from typing import TypeVar

import attrs

from .special import norm_sf

K = TypeVar("K", bound=Hashable)  # what names an operator: its index in a campaign

#: One-sided level of the test for positive serial correlation in an operator's rounds.
DETECT_ALPHA = 0.05
#: The same over every operator of a campaign together (many operators: a strict level).
CAMPAIGN_ALPHA = 0.01
#: The largest correlation the model fits (beyond it rounds carry almost no information).
MAX_RHO = 0.95
#: Standard errors added to the observed lag-1 ratio before rho is read from it.
RHO_MARGIN = 1.0
#: Fewest residuals a series needs to take part in the detection.
MIN_SERIES_ROUNDS = 4
#: An operator whose shapes share a component of each round at this level (the F test of
#: :func:`zl_core.stats.shared.sharing_p`) has its intervals widened as if that component
#: were a slow state, whatever the lag-1 test says (rules 5; docs/statistics.md §3).
SHARING_ALPHA = 0.1

Pattern = tuple[tuple[int, ...], tuple[int, ...]]  # (rounds, orders +1/-1)
Matrix = tuple[tuple[float, ...], ...]


@attrs.frozen(kw_only=True)
class Residuals:
    rounds: tuple[int, ...]
    orders: tuple[int, ...]
    e: tuple[float, ...]  # residuals in round order


@attrs.frozen
class _Design:
    m: Matrix  # residual maker
    b: Matrix  # M A M, A: half the sum of neighbouring products
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
    b = _mul(_mul(m, a), m)
    c = tuple(1.0 / (2.0 * size[o]) for o in orders)
    return _Design(m=_frozen(m), b=_frozen(b), c=c, df=n - 2, tr_b=sum(b[i][i] for i in range(n)),
                   tr_b2=sum(b[i][j] * b[j][i] for i in range(n) for j in range(n)))


def _mul(x: Sequence[Sequence[float]], y: Sequence[Sequence[float]]) -> list[list[float]]:
    n = len(x)
    return [[sum(x[i][k] * y[k][j] for k in range(n)) for j in range(n)] for i in range(n)]


def _frozen(x: list[list[float]]) -> Matrix:
    return tuple(tuple(row) for row in x)


@lru_cache(maxsize=8192)
def _traces(pattern: Pattern, rho: float) -> tuple[float, float]:
    """(tr(B R), tr(M R)) for R(rho) over the pattern's rounds (symmetric B and M)."""
    d = _design(pattern)
    rounds = pattern[0]
    n = len(rounds)
    tb = tm = 0.0
    for i in range(n):
        for j in range(n):
            w = rho ** abs(rounds[i] - rounds[j])
            tb += d.b[i][j] * w
            tm += d.m[i][j] * w
    return tb, tm


@attrs.frozen(kw_only=True)
class OperatorSerial:
    rho: float  # 0.0: no evidence of serial correlation
    lam: float  # share of a shape's variance in the shared state
    z: float  # the operator's own test statistic (standard normal at rho = 0)
    p: float
    source: str = "none"  # "operator" (its own rounds), "campaign", or "none"


NONE = OperatorSerial(rho=0.0, lam=0.0, z=0.0, p=1.0)


@attrs.frozen(kw_only=True)
class Evidence:
    """One operator's lag-1 evidence, in units of its own residual variance."""

    patterns: tuple[Pattern, ...]
    lag: float  # sum e'Ae / sigma^2
    sq: float  # sum e'e / sigma^2 (its residual degrees of freedom)
    excess: float  # lag - c * sq, the statistic's numerator
    var: float  # its null variance
    tr_b: float
    share: float  # the shared state's share of the residual variance (1.0: one series)

    @property
    def z(self) -> float:
        return self.excess / math.sqrt(self.var) if self.var > 0 else 0.0


def evidence(series: Sequence[Residuals], r: float, r2: float) -> Evidence | None:
    """An operator's evidence from its shapes' residuals (or its one series); ``r`` and
    ``r2`` are their residual correlation and squared correlation (:mod:`.shared`)."""
    items = [s for s in series if len(s.e) >= MIN_SERIES_ROUNDS]
    if not items:
        return None
    designs = [_design((s.rounds, s.orders)) for s in items]
    lag = sum(sum(s.e[i] * s.e[i + 1] for i in range(len(s.e) - 1)) for s in items)
    sq = sum(sum(x * x for x in s.e) for s in items)
    df = sum(d.df for d in designs)
    if not (sq > 0 and df > 0):
        return None
    m = len(items)
    r2 = 1.0 if m == 1 else min(1.0, max(0.0, r2))
    tr_b = sum(d.tr_b for d in designs)
    c = tr_b / df  # the ratio's value at rho = 0
    var = 2.0 * sum(d.tr_b2 - 2.0 * c * d.tr_b + c * c * d.df for d in designs) * (1.0 + (m - 1) * r2)
    unit = sq / df
    return Evidence(patterns=tuple((s.rounds, s.orders) for s in items), lag=lag / unit, sq=df,
                    excess=(lag - c * sq) / unit, var=var, tr_b=tr_b,
                    share=1.0 if m == 1 else min(1.0, max(0.0, r)))


def _lam(e: Evidence, tm: float) -> float:
    """The state's share of a round's variance, from its share of the residuals': the
    order means remove part of a slow state, tr(M R) < tr(M) = df."""
    s = e.share
    if s >= 1.0 or s <= 0.0:
        return s
    return s * e.sq / (tm * (1.0 - s) + s * e.sq)


def _sums(e: Evidence, rho: float) -> tuple[float, float]:
    tb = tm = 0.0
    for pattern in e.patterns:
        b, mm = _traces(pattern, rho)
        tb += b
        tm += mm
    return tb, tm


def lam_at(e: Evidence, rho: float) -> float:
    return _lam(e, _sums(e, rho)[1])


def match_rho(evs: Sequence[Evidence], *, shared: bool = True) -> float:
    """The rho whose expected ratio sum tr(B Sigma) / sum tr(M Sigma) matches the observed
    sum e'Ae / sum e'e: each operator's state shared by its shapes with its own lam (read
    from its residual correlation at that rho), or (``shared=False``) each shape's rounds
    an AR(1) series of their own (lam 1). The ratio is read one standard error high: a
    correlation estimated from a few rounds scatters widely, and the low half of that
    scatter would undercover."""
    sq = sum(e.sq for e in evs)
    observed = (sum(e.lag for e in evs) + RHO_MARGIN * math.sqrt(sum(e.var for e in evs))) / sq

    def expected(rho: float) -> float:
        num = den = 0.0
        for e in evs:
            tb, tm = _sums(e, rho)
            lam = _lam(e, tm) if shared else 1.0
            num += lam * tb + (1.0 - lam) * e.tr_b
            den += lam * tm + (1.0 - lam) * e.sq
        return num / den

    lo, hi = 0.0, MAX_RHO
    if expected(hi) <= observed:
        return hi
    for _ in range(30):
        mid = (lo + hi) / 2.0
        if expected(mid) < observed:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2.0, 4)


def _candidates(evs: Sequence[Evidence]) -> tuple[float, float]:
    """rho under each reading of the same lag-1 evidence: a state shared by the shapes
    (beside white noise of their own), and every shape's rounds an AR(1) of their own."""
    shared = match_rho(evs) if all(e.share > 0 for e in evs) else 0.0
    return shared, match_rho(evs, shared=False)


def _pooled_share(evs: Sequence[Evidence]) -> list[Evidence]:
    """The campaign's evidence with one shared share for all (their df-weighted mean): a
    card's state is the campaign's, and one operator's correlation is a noisy measure."""
    total = sum(e.sq for e in evs)
    share = sum(e.share * e.sq for e in evs) / total if total > 0 else 0.0
    return [attrs.evolve(e, share=share) if e.share < 1.0 else e for e in evs]


def _widest(e: Evidence, fits: Sequence[tuple[Evidence, float, float, str]]
            ) -> tuple[float, float, str]:
    """Of every reading (each fit's shared and own-AR rho), the (rho, lam, source) that
    widens this operator's estimate most: the data of a few rounds cannot tell them apart,
    and the narrower could undercover."""
    pattern = e.patterns[0]
    options = []
    for ev, shared_rho, own_rho, source in fits:
        options.append((own_rho, 1.0, source))
        if shared_rho > 0:
            options.append((shared_rho, lam_at(ev, shared_rho), source))
    return max(options, key=lambda o: moments(*pattern, o[0], o[1]).widen)


def mean_evidence(mean: Residuals, shapes: int, r: float) -> Evidence | None:
    """The evidence of an operator's per-round mean over ``shapes`` shapes whose residuals
    correlate by ``r``: a state the shapes share adds up in it, their own noise averages
    out, so it shows a shared state more plainly than the shapes do one by one."""
    e = evidence([mean], 1.0, 1.0)
    if e is None or shapes <= 1:
        return e
    r = min(1.0, max(0.0, r))
    return attrs.evolve(e, share=shapes * r / (1.0 + (shapes - 1) * r) if r < 1.0 else 1.0)


def models(evidence_of: Mapping[K, tuple[Evidence | None, Evidence | None]], *,
           sharing: Mapping[K, float] | None = None) -> dict[K, OperatorSerial]:
    """Each operator's serial model from ``(shapes' evidence, its mean's evidence)``: its
    own rounds' where either statistic is significant (Bonferroni over the two), and the
    campaign's where all operators' shapes together are (a state of the card, which only
    ever widens): whichever reading widens the operator most.

    ``sharing[key]`` (the intervals' model): the p-value of the operator's shapes sharing a
    component of each round. Below :data:`SHARING_ALPHA` that component is also read as a
    slow state, rho from the per-round mean's lag-1 ratio one standard error high: a
    shared state of rho 0.8 shows plainly as sharing in 8 rounds, but its correlation
    reaches the lag-1 test only about a third of the time."""
    evs = [e for e, _ in evidence_of.values() if e is not None]
    campaign = None
    if len(evs) > 1:
        z = sum(e.excess for e in evs) / math.sqrt(sum(e.var for e in evs))
        if norm_sf(z) < CAMPAIGN_ALPHA:
            pooled = _pooled_share(evs)
            campaign = _candidates(pooled), {id(e): p for e, p in zip(evs, pooled, strict=True)}
    out: dict[K, OperatorSerial] = {}
    for key, (e, mean) in evidence_of.items():
        if e is None:
            out[key] = NONE
            continue
        p = norm_sf(e.z) if mean is None else min(1.0, 2.0 * min(norm_sf(e.z), norm_sf(mean.z)))
        fits = []
        if campaign is not None:
            fits.append((campaign[1][id(e)], *campaign[0], "campaign"))
        if p < DETECT_ALPHA:
            shared_rho, own_rho = _candidates([e])
            if mean is not None and mean.share > 0:
                shared_rho = max(shared_rho, match_rho([mean]))
            fits.append((e, shared_rho, own_rho, "operator"))
        elif sharing is not None and sharing.get(key, 1.0) < SHARING_ALPHA and mean is not None \
                and mean.share > 0:
            fits.append((e, match_rho([mean]), 0.0, "operator"))
        if not fits:
            out[key] = OperatorSerial(rho=0.0, lam=e.share, z=e.z, p=p)
            continue
        rho, lam, source = _widest(e, fits)
        out[key] = OperatorSerial(rho=rho, lam=lam, z=e.z, p=p, source=source)
    return out


@attrs.frozen(kw_only=True)
class Moments:
    """What the operator's serial model does to one series' spread and estimate."""

    tr_ms: float  # E[sse] / sigma^2
    df: float  # Satterthwaite degrees of freedom of sse
    widen: float  # Var(estimate) over sigma^2 * c'c


@lru_cache(maxsize=4096)
def moments(rounds: tuple[int, ...], orders: tuple[int, ...], rho: float, lam: float = 1.0) -> Moments:
    d = _design((rounds, orders))
    n = len(rounds)
    sigma = [[(1.0 if i == j else 0.0) * (1.0 - lam) + lam * rho ** abs(rounds[i] - rounds[j])
              for j in range(n)] for i in range(n)]
    ms = _mul(d.m, sigma)
    tr_ms = sum(ms[i][i] for i in range(n))
    tr_ms2 = sum(ms[i][j] * ms[j][i] for i in range(n) for j in range(n))
    c_sigma_c = sum(d.c[i] * d.c[j] * sigma[i][j] for i in range(n) for j in range(n))
    return Moments(tr_ms=tr_ms, df=tr_ms * tr_ms / tr_ms2 if tr_ms2 > 0 else float(d.df),
                   widen=c_sigma_c / sum(x * x for x in d.c))


def mean_share(lam: float, shapes: int) -> float:
    """The shared state's share of the variance of the mean over ``shapes`` shapes."""
    if shapes <= 1 or lam <= 0.0:
        return lam
    return lam / (lam + (1.0 - lam) / shapes)
