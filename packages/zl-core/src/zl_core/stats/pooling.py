"""Shape variances that borrow strength from the campaign, without counting shared noise twice.

A shape's own residual variance after a look has only ``n - 2`` degrees of freedom, so
its p-values cannot get small enough for a campaign's false-discovery step: at 6 rounds
a +3% shape at 1% noise clears its own 95% interval 72% of the time and survives a
2,000-test family 0.2% of the time. Shapes that share a noise level carry information
about each other's variance. The empirical-Bayes model of Smyth (2004, "Linear models
and empirical Bayes methods for assessing differential expression") takes the true
variances of a noise class as scaled inverse chi-square, ``d0 * s0^2 / chi2(d0)``,
estimates ``s0^2`` and ``d0`` from the spread of the class's ``log s^2``, and gives each
shape the posterior variance

    s~^2 = (d0 * s0^2 + d * s^2) / (d0 + d)      with d0 + d degrees of freedom.

``d0`` is estimated, so the pooling is only as strong as the class is homogeneous:
variances 30-fold apart give a small ``d0`` and little pooling.

What a shape may borrow from, and why:

- **Noise classes** are latency decades centred on the powers of ten (the median
  side-A latency of the shape: 3.2-32 us is "about 10 us", 32-316 us "about 100 us",
  ...): a 20 us elementwise kernel and a 2 ms GEMM do not share a noise level, and the
  estimated ``d0`` keeps what heterogeneity remains honest.
- **Never from its own operator.** A shape's rounds are processes that also ran every
  other shape of its operator, so the shapes of one operator share each process's noise
  (and a disturbed cell's slowdown). Their variances agree because they saw the same
  processes, not because they are known better. The prior of a shape is therefore
  fitted on the *other* operators of its class (separate processes), and ``d0`` is
  capped at what those operators can carry if their own shapes were perfectly
  correlated: one shape's degrees of freedom each.
- **Not when its own spread is far above the class's**: a shape whose ``s^2`` lies
  beyond the 99.9% point of its predictive F distribution (a disturbed process, a
  noisier shape) keeps its own variance and degrees of freedom, with a note. Pooling
  such a shape would let one bad cell decide its verdict.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

import attrs

from .special import digamma, f_sf, trigamma, trigamma_inverse

#: A prior needs at least this many other operators of the class ...
MIN_POOL_OPERATORS = 2
#: ... and this many of their shapes.
MIN_POOL_SHAPES = 6
#: A shape whose variance is beyond this upper tail of its predictive F is not pooled.
OUTLIER_TAIL = 1e-3


def noise_class(latency_ms: float) -> int:
    """Latency decade of a shape, centred on a power of ten: -2 for 3.2-32 us (about
    10 us), -1 for about 100 us, 0 for about 1 ms (0.32-3.2 ms), ..."""
    return round(math.log10(latency_ms)) if latency_ms > 0 else 0


@attrs.frozen(kw_only=True)
class Sample:
    """One shape's own variance at a look, as the pool sees it."""

    op: str
    cls: object
    s2: float  # residual variance (floored at the tie variance), log scale
    df: float


@attrs.frozen(kw_only=True)
class Prior:
    s2: float
    df: float  # inf: the class's variances look equal
    operators: int  # other operators it was fitted on
    shapes: int


@attrs.frozen(kw_only=True)
class Pooled:
    var: float
    df: float
    note: str | None = None  # why the shape was not pooled, where it was eligible


def _moments(s2: float, df: float) -> tuple[float, float]:
    half = df / 2.0
    e = math.log(s2) - digamma(half) + math.log(half)
    return e, trigamma(half)


@attrs.define
class _Sums:
    n: int = 0
    e: float = 0.0
    e2: float = 0.0
    tri: float = 0.0
    cap: float = 0.0  # sum over operators of their largest shape df

    def add(self, e: float, tri: float) -> None:
        self.n += 1
        self.e += e
        self.e2 += e * e
        self.tri += tri

    def minus(self, other: _Sums) -> _Sums:
        return _Sums(self.n - other.n, self.e - other.e, self.e2 - other.e2,
                     self.tri - other.tri, self.cap - other.cap)


class Pool:
    """The priors of every (operator, class) at one look, fitted leaving that operator out."""

    def __init__(self, samples: Iterable[Sample]):
        self._class: dict[object, _Sums] = defaultdict(_Sums)
        self._op: dict[tuple[str, object], _Sums] = defaultdict(_Sums)
        self._ops: dict[object, set[str]] = defaultdict(set)
        largest: dict[tuple[str, object], float] = {}
        for s in samples:
            if not (s.s2 > 0 and math.isfinite(s.s2) and s.df >= 1):
                continue
            e, tri = _moments(s.s2, s.df)
            self._class[s.cls].add(e, tri)
            self._op[(s.op, s.cls)].add(e, tri)
            self._ops[s.cls].add(s.op)
            largest[(s.op, s.cls)] = max(largest.get((s.op, s.cls), 0), s.df)
        for (op, cls), df in largest.items():
            self._op[(op, cls)].cap = df
            self._class[cls].cap += df
        self._priors: dict[tuple[str, object], Prior | None] = {}

    def prior(self, op: str, cls: object) -> Prior | None:
        key = (op, cls)
        if key not in self._priors:
            self._priors[key] = self._fit(op, cls)
        return self._priors[key]

    def _fit(self, op: str, cls: object) -> Prior | None:
        others = len(self._ops.get(cls, set()) - {op})
        sums = self._class.get(cls, _Sums()).minus(self._op.get((op, cls), _Sums()))
        if others < MIN_POOL_OPERATORS or sums.n < MIN_POOL_SHAPES:
            return None
        mean = sums.e / sums.n
        spread = (sums.e2 - sums.n * mean * mean) / (sums.n - 1) - sums.tri / sums.n
        d0 = 2.0 * trigamma_inverse(spread) if spread > 0 else math.inf
        d0 = min(d0, sums.cap)
        half = d0 / 2.0
        s2 = math.exp(mean + digamma(half) - math.log(half))
        return Prior(s2=s2, df=d0, operators=others, shapes=sums.n)

    def moderate(self, sample: Sample) -> Pooled:
        """The shape's posterior variance and its degrees of freedom."""
        own = Pooled(var=sample.s2, df=float(sample.df))
        prior = self.prior(sample.op, sample.cls)
        if prior is None or sample.df < 1 or not sample.s2 > 0:
            return own
        if f_sf(sample.s2 / prior.s2, sample.df, prior.df) < OUTLIER_TAIL:
            return attrs.evolve(own, note=(
                f"its own spread ({math.sqrt(sample.s2) * 100:.2f}% a round) is far above its "
                f"latency class's ({math.sqrt(prior.s2) * 100:.2f}%): judged on its own rounds, "
                "not pooled"))
        var = (prior.df * prior.s2 + sample.df * sample.s2) / (prior.df + sample.df)
        return Pooled(var=var, df=prior.df + sample.df)
