"""How much of one process's noise the shapes of an operator share.

The shapes of one operator run in the same processes, so a slow process, a disturbed cell
or a slowly drifting side state moves all of them together. Their residuals then agree
for that reason: sibling shapes tell less about a shape's variance than their number
suggests (:mod:`.pooling`), and a serial state shared by them is one state, not many
(:mod:`.serial`). The measure of both is the squared correlation of the shapes'
residual vectors over the rounds they share.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import attrs

from .special import f_sf


@attrs.frozen(kw_only=True)
class Shared:
    """Average squared residual correlation of an operator's shapes (``r2``, 1.0 where no
    pair could be measured: assume everything shared) and each shape's with its siblings."""

    r2: float
    r2_of: tuple[float, ...]
    r: float = 1.0  # average (signed) residual correlation, clipped to [0, 1]


def pair_r(x: Sequence[float], y: Sequence[float], df: float) -> tuple[float, float]:
    """Correlation of two residual vectors, and its square less what chance alone gives
    (1/df): unbiased at no correlation, so it may be negative (averages are clipped, not
    pairs)."""
    sxy = sum(a * b for a, b in zip(x, y, strict=True))
    sxx, syy = sum(a * a for a in x), sum(b * b for b in y)
    if not (sxx > 0 and syy > 0) or df <= 1:
        return 1.0, 1.0
    r = sxy / (sxx * syy) ** 0.5
    return r, (df * r * r - 1.0) / (df - 1.0)


def shared(series: Sequence[tuple[tuple[int, ...], Sequence[float]]]) -> Shared:
    """``series``: each shape's (rounds, residuals after the two run-order means); pairs
    are measured where two shapes have the same rounds."""
    pairs: dict[int, list[float]] = defaultdict(list)
    signed: list[float] = []
    for i, (rounds_i, e_i) in enumerate(series):
        for j in range(i + 1, len(series)):
            rounds_j, e_j = series[j]
            if rounds_i and rounds_i == rounds_j:
                r, r2 = pair_r(e_i, e_j, len(e_i) - 2)
                signed.append(r)
                pairs[i].append(r2)
                pairs[j].append(r2)
    every = [x for xs in pairs.values() for x in xs]
    r2 = _unit(sum(every) / len(every)) if every else 1.0
    return Shared(r2=r2, r2_of=tuple(_unit(sum(pairs[i]) / len(pairs[i])) if pairs[i] else r2
                                     for i in range(len(series))),
                  r=_unit(sum(signed) / len(signed)) if signed else 1.0)


def sharing_p(series: Sequence[tuple[tuple[int, ...], Sequence[float]]]) -> float:
    """P-value of "the shapes share no component of each round": the F test of a one-way
    layout, the per-round mean residual's spread (``n - 2`` df) against the shapes' spread
    around it (``(m - 1)(n - 2)`` df), on the largest group of shapes with the same rounds.
    Exact for independent Gaussian shapes of equal variance; 1.0 where no two shapes
    share their rounds."""
    groups: dict[tuple[int, ...], list[Sequence[float]]] = defaultdict(list)
    for rounds, e in series:
        if len(rounds) > 2:
            groups[rounds].append(e)
    if not groups:
        return 1.0
    rounds, es = max(groups.items(), key=lambda g: len(g[1]))
    m, n = len(es), len(rounds)
    if m < 2:
        return 1.0
    means = [sum(e[r] for e in es) / m for r in range(n)]
    between = m * sum(x * x for x in means)
    within = sum((e[r] - means[r]) ** 2 for e in es for r in range(n))
    d1, d2 = n - 2, (m - 1) * (n - 2)
    if not within > 0:
        return 0.0 if between > 0 else 1.0
    return f_sf(between / d1 / (within / d2), d1, d2)


def _unit(x: float) -> float:
    return min(1.0, max(0.0, x))
