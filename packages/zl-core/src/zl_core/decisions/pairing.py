"""Pair side A's rows with side B's, shape by shape.

The key is (dtype, size_detail, occurrence index): the index tells apart a
shape that one table measures twice (BLAS operators do at comprehensive
level), matching the first A occurrence with the first B occurrence and so on.

Only rows that are SUCCESS with a positive latency on both sides carry a
delta. Among those, a pair is *comparable* only when both sides used the same
timer and neither fell back from graph capture: a fallback row is a different,
much noisier instrument, so such pairs are classed apart and never pooled with
captured ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from zl_core.interface.rows import SUCCESS, Row

#: Pair classes, in the order reports list them.
OK = "ok"  # same known timer on both sides, no fallback: pooled
FALLBACK = "fallback"  # both sides fell back to direct timing: same instrument, kept apart
MIXED_TIMER = "mixed_timer"  # timers differ, one side fell back, or a timer is unknown
FAILED = "failed"  # not SUCCESS (or no usable latency) on at least one side
ONLY_A = "only_a"
ONLY_B = "only_b"
CLASSES = (OK, FALLBACK, MIXED_TIMER, FAILED, ONLY_A, ONLY_B)
#: Classes with a delta that may be shown (but only OK is pooled into statistics).
MEASURED = (OK, FALLBACK, MIXED_TIMER)

Key = tuple[str, str, int]


@attrs.frozen(kw_only=True)
class Pair:
    key: Key
    a: Row | None
    b: Row | None
    cls: str
    reason: str = ""

    @property
    def dtype(self) -> str:
        return self.key[0]

    @property
    def size_detail(self) -> str:
        return self.key[1]

    @property
    def occurrence(self) -> int:
        return self.key[2]

    @property
    def op(self) -> str:
        """The operator of the pair's rows (a pair holds a row of one side at least)."""
        row = self.a if self.a is not None else self.b
        return row.op if row is not None else ""

    @property
    def latencies(self) -> tuple[float, float] | None:
        """(A's latency, B's) where both sides measured one."""
        if self.a is None or self.b is None or self.a.latency_ms is None or self.b.latency_ms is None:
            return None
        return self.a.latency_ms, self.b.latency_ms

    @property
    def timer(self) -> str | None:
        """The common timer of a comparable pair ("direct" for a both-fallback pair)."""
        if self.cls in (OK, FALLBACK) and self.a is not None:
            return self.a.timer
        return None

    @property
    def delta_pct(self) -> float | None:
        """(A / B - 1) * 100 on latency: positive means B is faster."""
        if self.cls not in MEASURED or self.a is None or self.b is None:
            return None
        return delta_pct(self.a.latency_ms, self.b.latency_ms)


def delta_pct(a_ms: float | None, b_ms: float | None) -> float | None:
    if not a_ms or not b_ms or a_ms <= 0 or b_ms <= 0:
        return None
    return (a_ms / b_ms - 1.0) * 100.0


def keyed(rows: Iterable[Row]) -> dict[Key, Row]:
    """Rows by (dtype, size_detail, occurrence), occurrence counted in printed order."""
    seen: dict[tuple[str, str], int] = {}
    out: dict[Key, Row] = {}
    for row in rows:
        base = (row.dtype, row.size_detail)
        index = seen.get(base, 0)
        seen[base] = index + 1
        out[(base[0], base[1], index)] = row
    return out


def classify(a: Row | None, b: Row | None) -> tuple[str, str]:
    """The class of one pair and, for the non-OK ones, why."""
    if a is None:
        return ONLY_B, "no row on side A"
    if b is None:
        return ONLY_A, "no row on side B"
    bad = [side for side, row in (("A", a), ("B", b)) if not _usable(row)]
    if bad:
        return FAILED, "failed or no latency on " + " and ".join(bad)
    if a.fallback and b.fallback:
        return FALLBACK, "both sides fell back to direct timing"
    if a.fallback or b.fallback:
        side = "A" if a.fallback else "B"
        return MIXED_TIMER, f"only side {side} fell back to direct timing"
    if a.timer is None or b.timer is None:
        return MIXED_TIMER, "timer unknown (rows from a printed table with capture fallbacks)"
    if a.timer != b.timer:
        return MIXED_TIMER, f"timers differ: A={a.timer} B={b.timer}"
    return OK, ""


def _usable(row: Row) -> bool:
    return row.status == SUCCESS and row.latency_ms is not None and row.latency_ms > 0


def pair_rows(a_rows: Sequence[Row], b_rows: Sequence[Row]) -> list[Pair]:
    """All pairs: A's keys in A's order, then keys only B has, in B's order."""
    a_by, b_by = keyed(a_rows), keyed(b_rows)
    keys = list(a_by) + [k for k in b_by if k not in a_by]
    pairs = []
    for key in keys:
        cls, reason = classify(a_by.get(key), b_by.get(key))
        pairs.append(Pair(key=key, a=a_by.get(key), b=b_by.get(key), cls=cls, reason=reason))
    return pairs


def count_classes(pairs: Iterable[Pair]) -> dict[str, int]:
    counts = dict.fromkeys(CLASSES, 0)
    for pair in pairs:
        counts[pair.cls] += 1
    return counts


def shape_label(key: Key) -> str:
    """Human label of a key; the occurrence shows only for repeated shapes."""
    dtype, size, index = key
    return f"{dtype} {size}" + (f" #{index + 1}" if index else "")
