"""Campaign-level false-discovery control over operators and their shapes.

Two stages (Benjamini & Bogomolov, 2014, "Selective inference on multiple families
of hypotheses"):

1. Each operator is a family: its shapes' hypotheses ("this shape is within the
   threshold") and, with two or more shapes, the hypothesis on its per-round mean.
   The family's p-value is the Simes combination of its members. Benjamini-Hochberg
   at level q over the operators' family p-values selects R of M operators: the
   expected share of selected operators with no effect beyond the threshold is at
   most q.
2. Inside each selected operator, Benjamini-Hochberg at level q * R / M calls the
   members. A selected operator always calls at least one member (Simes and BH
   agree on the first step).

Simes and BH assume independent or positively dependent p-values. Operators run in
separate processes; the shapes of one process share its noise, which makes their
statistics positively correlated, the case where Simes holds.
"""

from __future__ import annotations

from collections.abc import Sequence


def simes(ps: Sequence[float]) -> float:
    """Simes' combination: min over i of m * p_(i) / i (1.0 for no p-values)."""
    s = sorted(ps)
    m = len(s)
    return min([1.0] + [m * p / i for i, p in enumerate(s, start=1)])


def benjamini_hochberg(ps: Sequence[float], q: float) -> set[int]:
    """Indices rejected by the BH step-up rule at level q."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    k = 0
    for rank, i in enumerate(order, start=1):
        if ps[i] <= q * rank / m:
            k = rank
    return set(order[:k])


def two_stage(families: Sequence[Sequence[float]], q: float, *, keep_alone: bool = True
              ) -> tuple[set[int], dict[int, set[int]]]:
    """Selected families and, per selected family, the members it calls.

    With ``keep_alone``, a family whose Simes p-value is at most ``q / M`` (Bonferroni over
    the families) is tested inside at ``q``, as it would be alone; the others at ``q R /
    M``. Benjamini-Hochberg selects every such family, so the families selected, and
    whether a campaign with no effect calls anything, are those of the plain rule."""
    m = len(families)
    combined = [simes(f) for f in families]
    selected = benjamini_hochberg(combined, q)
    level = q * len(selected) / m if m else 0.0
    return selected, {i: benjamini_hochberg(families[i], q if keep_alone and combined[i] <= q / m else level)
                      for i in selected}
