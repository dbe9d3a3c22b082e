"""The numbers a rounds report leads with: each operator's verdict estimate (the
estimate and interval its verdict was decided on) and the campaign's geometric mean
over its decided shapes.

An operator's verdict comes from its per-round mean over its shapes (``operator.mean``)
together with its shapes' own verdicts; the estimate a reader is shown beside the
verdict is that mean's, or, for an operator with one counted shape (no mean is
formed), that shape's. The median of the shapes' medians stays in the model as a
description (``operator.median_of_medians_pct``), never beside the verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TypeGuard

#: Shape verdicts that decide something (INCONCLUSIVE does not).
from zl_core.foundation.verdicts import DECIDED


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _interval(test: Mapping | None, basis: str, shapes: int) -> dict | None:
    if not test or test.get("look") is None:
        return None
    values = [test.get(k) for k in ("estimate_pct", "ci_low_pct", "ci_high_pct")]
    if not all(_finite(v) for v in values):
        return None
    return {"estimate_pct": values[0], "ci_low_pct": values[1], "ci_high_pct": values[2],
            "basis": basis, "shapes": shapes}


def verdict_estimate(operator: Mapping, counted_stats: list[Mapping]) -> dict | None:
    """``operators[].estimate``: ``{"estimate_pct", "ci_low_pct", "ci_high_pct", "basis",
    "shapes"}``, ``basis`` ``"mean"`` (the per-round mean of ``shapes`` shapes, the
    operator's own statistic) or ``"shape"`` (its one counted shape); None where neither
    has an interval yet."""
    mean = _interval(operator.get("mean"), "mean", int(operator.get("mean_shapes") or 0))
    if mean is not None:
        return mean
    if len(counted_stats) == 1:
        return _interval(counted_stats[0], "shape", 1)
    return None


def geometric_mean(rows: Iterable[Mapping]) -> dict | None:
    """``summary.geomean``: the geometric mean of A/B over the campaign's decided shapes
    (counted, not controls, verdict FASTER, SLOWER or NO_CHANGE), each shape at the
    estimate its interval is built around: ``{"shapes", "ratio", "delta_pct"}`` (ratio
    A/B, above 1 where B is faster; ``delta_pct`` the same as a delta). None without a
    decided shape."""
    logs = []
    for row in rows:
        stats = row.get("stats") or {}
        estimate = stats.get("estimate_pct")
        if (row.get("counted") and not row.get("control") and row.get("verdict") in DECIDED
                and _finite(estimate) and estimate > -100):
            logs.append(math.log1p(estimate / 100))
    if not logs:
        return None
    ratio = math.exp(sum(logs) / len(logs))
    return {"shapes": len(logs), "ratio": ratio, "delta_pct": (ratio - 1) * 100}
