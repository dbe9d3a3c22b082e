"""Series variances that borrow strength without making a noisy operator look quiet.

A shape's own residual variance after a look has only ``n - 2`` degrees of freedom: too
few for the small p-values a campaign's false-discovery step needs. Shapes that share a
noise level carry information about each other's variance (empirical Bayes, Smyth 2004):
each series gets the posterior variance

    s~^2 = (d0 * s0^2 + d * s^2) / (d0 + d)      with d0 + d degrees of freedom,

around a prior ``s0^2`` that is known to ``d0`` degrees of freedom. What the prior is
decides whether the result can be trusted. On real cards, operators of one latency
differ 10-40x in noise (memory-bound 0.1%, GEMMs 1-3%), so a prior fitted on a latency
class shrinks a noisy operator's variance towards quieter neighbours (false calls), and
a quiet operator's towards noisier ones (lost calls, verdicts that change with unrelated
operators). Hence the prior of a shape is **anchored on its own operator**:

- ``log sigma^2`` of a shape is modelled as ``a_op + mu_decade + eps``: the operator's own
  noise level, the latency pattern every operator shares (a 1 us shape is noisier than a
  1 ms one of the same kernel), and what is left, of variance ``tau^2``.
- ``a_op`` is estimated from the operator's *other* shapes only, so an operator noisier
  or quieter than the rest of the campaign keeps its own level; the campaign contributes
  only the latency pattern ``mu`` (fitted on every operator: two-way additive, so an
  operator's level never leaks into the pattern) and ``tau^2``.
- ``d0`` is what the anchor knows: the uncertainty of ``a_op`` (its sibling shapes, fewer
  in effect where their rounds are correlated, i.e. share a process's noise) plus
  ``tau^2``. A shape whose residuals move with its siblings' (a shared slow process, a
  disturbed cell) learns correspondingly little from them: ``d0`` is scaled by
  ``1 - r^2``, ``r^2`` the bias-corrected squared correlation of their residuals.
- The operators' per-round means are anchored the same way on their operator's shapes
  (``log var(mean) = log avg s^2 + nu + eps``), with ``nu`` fitted across operators.
- A series whose own spread lies beyond the :data:`OUTLIER_TAIL` upper point of its
  predictive F distribution keeps its own variance, with a note.

Every series is also judged **alone**, by its operator's data only (no latency pattern,
``tau^2`` from its own shapes, per-round means on their own rounds); :mod:`.judge` keeps
the campaign's answer only where it is at least as decided, so adding operators to a
campaign never takes a verdict away (docs/statistics.md, "Company").
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable

import attrs

from .shared import shared
from .special import digamma, f_sf, trigamma, trigamma_inverse

#: A decade's latency pattern needs shapes of at least this many operators.
MIN_PATTERN_OPERATORS = 2
#: The means' pattern needs this many other operators with a per-round mean.
MIN_MEAN_OPERATORS = 2
#: A series whose variance is beyond this upper tail of its predictive F is not pooled.
OUTLIER_TAIL = 0.01
#: Residuals beyond this many expected squares (chi-square 1 at 99.9%) do not set tau^2.
_ROBUST_CUT = 10.83
_PATTERN_SWEEPS = 8


def noise_class(latency_ms: float) -> int:
    """Latency decade of a shape, centred on a power of ten: -2 for 3.2-32 us (about
    10 us), -1 for about 100 us, 0 for about 1 ms (0.32-3.2 ms), ..."""
    return round(math.log10(latency_ms)) if latency_ms > 0 else 0


@attrs.frozen(kw_only=True)
class Sample:
    """One series' own variance at a look, as the pool sees it."""

    op: str
    key: Hashable  # the series within its operator (a shape index, or the mean's key)
    cls: object  # latency decade (int), or the means' class
    s2: float  # residual variance (floored at the tie variance), log scale
    df: float
    rounds: tuple[int, ...] = ()
    residuals: tuple[float, ...] = ()


@attrs.frozen(kw_only=True)
class Pooled:
    var: float
    df: float
    note: str | None = None  # why the series was not pooled, where it was eligible


@attrs.frozen
class _Item:
    sample: Sample
    e: float  # unbiased estimate of log sigma^2
    t: float  # its variance, trigamma(df / 2)


def _log_var(s2: float, df: float) -> tuple[float, float]:
    half = df / 2.0
    return math.log(s2) - digamma(half) + math.log(half), trigamma(half)


class _Operator:
    """One operator's shapes and mean at a look: the anchor's raw material."""

    def __init__(self, items: list[_Item], mean: _Item | None):
        self.items = items
        self.mean = mean
        measured = shared([(x.sample.rounds, x.sample.residuals) for x in items])
        self.r2, self.r2_of = measured.r2, measured.r2_of

    def anchor(self, i: int, mu: dict[object, float], loud: frozenset[int] = frozenset()
               ) -> tuple[float, float] | None:
        """Centre and variance of shape i's prior log-variance from its siblings (less the
        ``loud`` ones, far above the rest)."""
        others = [x for j, x in enumerate(self.items) if j != i and j not in loud]
        if not others:
            return None
        m = len(others)
        a = sum(x.e - mu.get(x.sample.cls, 0.0) for x in others) / m
        t = sum(x.t for x in others) / m
        return a + mu.get(self.items[i].sample.cls, 0.0), t * (1.0 + (m - 1) * self.r2) / m

    def loud(self, mu: dict[object, float]) -> frozenset[int]:
        """Shapes whose log-variance lies far above their siblings' (beyond the 99.9% point
        of its expected spread): a disturbed or much noisier shape must not raise the
        level its siblings are judged by."""
        out = set()
        for i, x in enumerate(self.items):
            anchor = self.anchor(i, mu)
            if anchor is not None:
                r = x.e - anchor[0]
                if r > 0 and r * r > _ROBUST_CUT * (x.t + anchor[1]):
                    out.add(i)
        return frozenset(out) if len(out) < len(self.items) else frozenset()

    def level(self) -> tuple[float, float] | None:
        """Log of the average shape variance, and its variance (for the mean's anchor)."""
        if not self.items:
            return None
        m = len(self.items)
        avg = sum(x.sample.s2 for x in self.items) / m
        t = sum(x.t for x in self.items) / m
        return math.log(avg), t * (1.0 + (m - 1) * self.r2) / m


def _spread(residuals: Iterable[tuple[float, float]]) -> float:
    """tau^2 from (residual, its expected square without tau^2) pairs, robust to a few
    series far off their anchor (the outlier guard handles those one by one)."""
    rs = list(residuals)
    tau2 = 0.0
    if not rs:
        return tau2
    for _ in range(2):
        kept = [(r, v) for r, v in rs if r * r <= _ROBUST_CUT * (v + tau2)] or rs
        tau2 = max(0.0, sum(r * r - v for r, v in kept) / len(kept))
    return tau2


class Pool:
    """The priors of every series at one look, for the campaign and for each operator alone."""

    def __init__(self, samples: Iterable[Sample], *, mean_class: object):
        self._mean_class = mean_class
        shapes: dict[str, list[_Item]] = defaultdict(list)
        means: dict[str, _Item] = {}
        for s in samples:
            if not (s.s2 > 0 and math.isfinite(s.s2) and s.df >= 1):
                continue
            item = _Item(s, *_log_var(s.s2, s.df))
            if s.cls == mean_class:
                means[s.op] = item
            else:
                shapes[s.op].append(item)
        self._ops = {op: _Operator(shapes.get(op, []), means.get(op))
                     for op in set(shapes) | set(means)}
        self._index = {(op, x.sample.key): i for op, o in self._ops.items() for i, x in enumerate(o.items)}
        self._mu = self._pattern()
        self._tau2 = _spread(self._shape_residuals(self._ops, self._mu))
        self._alone_tau2: dict[str, float] = {}
        self._louds: dict[tuple[str, bool], frozenset[int]] = {}
        self._nu, self._mean_tau2 = self._mean_pattern()

    # ----------------------------------------------------------------- fitting

    def _pattern(self) -> dict[object, float]:
        """The latency pattern mu[decade], two-way additive with each operator's level,
        on decades where at least MIN_PATTERN_OPERATORS operators have shapes."""
        ops_of: dict[object, set[str]] = defaultdict(set)
        for op, o in self._ops.items():
            for x in o.items:
                ops_of[x.sample.cls].add(op)
        decades = {c for c, ops in ops_of.items() if len(ops) >= MIN_PATTERN_OPERATORS}
        if not decades:
            return {}
        items = [(op, x) for op, o in self._ops.items() for x in o.items if x.sample.cls in decades]
        mu = dict.fromkeys(decades, 0.0)
        level: dict[str, float] = {}
        for _ in range(_PATTERN_SWEEPS):
            sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
            for op, x in items:
                sums[op][0] += x.e - mu[x.sample.cls]
                sums[op][1] += 1
            level = {op: s / n for op, (s, n) in sums.items()}
            by: dict[object, list[float]] = defaultdict(lambda: [0.0, 0])
            for op, x in items:
                by[x.sample.cls][0] += x.e - level[op]
                by[x.sample.cls][1] += 1
            mu = {c: s / n for c, (s, n) in by.items()}
        centre = sum(mu.values()) / len(mu)
        return {c: v - centre for c, v in mu.items()}

    def _shape_residuals(self, ops: dict[str, _Operator], mu: dict[object, float]):
        for o in ops.values():
            for i, x in enumerate(o.items):
                anchor = o.anchor(i, mu)
                if anchor is not None:
                    # the siblings share the shape's processes: their residual correlation
                    # makes the anchor follow the shape, shrinking the residual's square
                    yield x.e - anchor[0], x.t + anchor[1] - 2.0 * o.r2_of[i] * x.t

    def _mean_pattern(self) -> tuple[dict[str, float], float]:
        """Each operator's prior centre offset nu for its mean, fitted on the others."""
        rs = {}
        for op, o in self._ops.items():
            lv = o.level()
            if o.mean is not None and lv is not None:
                rs[op] = (o.mean.e - lv[0], o.mean.t + lv[1])
        nu = {}
        total = sum(r for r, _ in rs.values())
        for op in rs:
            if len(rs) - 1 >= MIN_MEAN_OPERATORS:
                nu[op] = (total - rs[op][0]) / (len(rs) - 1)
        tau2 = _spread((r - nu[op], v) for op, (r, v) in rs.items() if op in nu)
        return nu, tau2

    # ----------------------------------------------------------------- priors

    def prior(self, sample: Sample, *, alone: bool) -> tuple[float, float] | None:
        """(s0^2, d0) of a series' prior, in the campaign or with its operator alone."""
        o = self._ops.get(sample.op)
        if o is None:
            return None
        if sample.cls == self._mean_class:
            lv = o.level()
            if alone or lv is None or o.mean is None or sample.op not in self._nu:
                return None
            centre, var = lv[0] + self._nu[sample.op], lv[1] + o.mean.t / max(1, len(self._nu) - 1)
            return _prior(centre, var + self._mean_tau2, 1.0 - o.r2, math.inf)
        i = self._index.get((sample.op, sample.key))
        if i is None:
            return None
        mu = {} if alone else self._mu
        anchor = o.anchor(i, mu, self._loud(sample.op, alone))
        if anchor is None:
            return None
        tau2 = self._alone(sample.op) if alone else self._tau2
        cap = sum(x.sample.df for j, x in enumerate(o.items) if j != i)
        return _prior(anchor[0], anchor[1] + tau2, 1.0 - o.r2_of[i], cap)

    def _loud(self, op: str, alone: bool) -> frozenset[int]:
        key = (op, alone)
        if key not in self._louds:
            self._louds[key] = self._ops[op].loud({} if alone else self._mu)
        return self._louds[key]

    def _alone(self, op: str) -> float:
        if op not in self._alone_tau2:
            self._alone_tau2[op] = _spread(self._shape_residuals({op: self._ops[op]}, {}))
        return self._alone_tau2[op]

    def moderate(self, sample: Sample, *, alone: bool = False) -> Pooled:
        """The series' posterior variance and its degrees of freedom."""
        own = Pooled(var=sample.s2, df=float(sample.df))
        prior = self.prior(sample, alone=alone) if sample.df >= 1 and sample.s2 > 0 else None
        if prior is None:
            return own
        s0, d0 = prior
        if f_sf(sample.s2 / s0, sample.df, d0) < OUTLIER_TAIL:
            return attrs.evolve(own, note=(
                f"its own spread ({math.sqrt(sample.s2) * 100:.2f}% a round) is far above what "
                f"its operator's other series predict ({math.sqrt(s0) * 100:.2f}%): judged on "
                "its own rounds, not pooled"))
        return Pooled(var=(d0 * s0 + sample.df * sample.s2) / (d0 + sample.df), df=d0 + sample.df)


def _prior(centre: float, spread: float, keep: float, cap: float) -> tuple[float, float] | None:
    """A scaled inverse chi-square prior whose log has mean ``centre`` and variance
    ``spread``: d0 from trigamma, scaled by ``keep`` (what correlation leaves) and capped."""
    d0 = 2.0 * trigamma_inverse(spread) if spread > 0 else math.inf
    d0 = min(d0 * max(0.0, keep), cap)
    if not d0 >= 1.0:
        return None
    if math.isinf(d0):
        return math.exp(centre), d0
    half = d0 / 2.0
    return math.exp(centre + digamma(half) - math.log(half)), d0
