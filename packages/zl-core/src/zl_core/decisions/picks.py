"""Two recordings of one operator's autotune picks, key by key: which keys picked the same
config, which changed, and which changes were near ties.

A *near tie* is a changed key whose two configs timed within the threshold of each other
in a sweep that timed both (either recording's): the tuner could have picked either, so
the change says little about the switch. A changed key that no sweep timed both ways is
neither (``near_tie`` None).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from zl_core.interface.picks import Pick


@attrs.frozen(kw_only=True)
class PickChange:
    kernel: str
    key: str
    first: str  # the config the first recording picked
    second: str  # the second's
    #: The closest the two configs came in a sweep that timed both: the slower's time
    #: over the faster's, minus 1, in percent; None where no sweep timed both.
    gap_pct: float | None
    near_tie: bool | None

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "key": self.key, "first": self.first, "second": self.second,
                "gap_pct": self.gap_pct, "near_tie": self.near_tie}


@attrs.frozen(kw_only=True)
class PickComparison:
    keys: int  # keys both recordings picked for
    same: int
    changed: tuple[PickChange, ...]
    only_first: int  # keys only the first recording reached
    only_second: int
    threshold_pct: float

    @property
    def near_ties(self) -> int:
        return sum(1 for c in self.changed if c.near_tie)

    def to_json(self) -> dict:
        return {"keys": self.keys, "same": self.same, "changed": [c.to_json() for c in self.changed],
                "near_ties": self.near_ties, "only_first": self.only_first,
                "only_second": self.only_second, "threshold_pct": self.threshold_pct}


def compare_picks(first: Sequence[Pick], second: Sequence[Pick], *, threshold_pct: float) -> PickComparison:
    """Key by key (tuner and key), what ``second`` picked against ``first``."""
    a = {(p.tuner, p.key): p for p in first}
    b = {(p.tuner, p.key): p for p in second}
    common = [k for k in a if k in b]
    changed = []
    for where in common:
        pa, pb = a[where], b[where]
        if pa.config == pb.config:
            continue
        gap = _closest(pa, pb)
        changed.append(PickChange(kernel=pa.kernel, key=pa.key, first=pa.config, second=pb.config,
                                  gap_pct=gap, near_tie=None if gap is None else gap <= threshold_pct))
    return PickComparison(keys=len(common), same=len(common) - len(changed), changed=tuple(changed),
                          only_first=sum(1 for k in a if k not in b),
                          only_second=sum(1 for k in b if k not in a), threshold_pct=threshold_pct)


def _closest(pa: Pick, pb: Pick) -> float | None:
    gaps = []
    for sweep in (pa, pb):
        ta, tb = sweep.timed(pa.config), sweep.timed(pb.config)
        if ta and tb and ta > 0 and tb > 0:
            gaps.append((max(ta, tb) / min(ta, tb) - 1.0) * 100.0)
    return min(gaps) if gaps else None
