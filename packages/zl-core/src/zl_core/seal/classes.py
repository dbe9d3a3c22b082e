"""The class of a sealed campaign's workload, beside its verdicts: what a compiler engineer
may claim for it, in one letter.

- **X**: nothing to claim: unsupported, timed out, a harness failure, a broken replay, or
  a correctness failure on both sides.
- **K**: a correctness failure only the candidate (side B) has: the worst result a
  compiler switch can ship, whatever its speed.
- **R**: correct, and a stable regression: slower by at least ``regression_pct`` in both
  run orders (rounds with A first, rounds with B first).
- **G**: correct, the layout-conversion topology of the measured kernels went down, and
  faster by at least ``gain_pct`` in both run orders.
- **C**: correct, topology down, but the gain is under ``gain_pct`` (or not in both orders).
- **B**: correct, topology not down.

The checks go in that order: a workload is X before anything else, K before any timing. A
workload whose TTGIR the switch left unchanged is untimed but still checked: the same TTGIR
can lower to other code, so a failure on side B only is K there too.
"""

from __future__ import annotations

import attrs

CLASSES = ("G", "C", "B", "R", "K", "X")
#: Defaults of a manifest's ``classes`` thresholds.
GAIN_PCT = 5.0
REGRESSION_PCT = 3.0


@attrs.frozen(kw_only=True)
class Correctness:
    """A side's accuracy tests: counts from their report, or why they could not run."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    problem: str = ""  # the tests could not run or be read (a harness failure)

    @property
    def ok(self) -> bool:
        return not self.problem and self.failed == 0 and self.passed > 0

    def to_json(self) -> dict:
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class Evidence:
    """What a workload's class is decided from, each part as the sealed run recorded it."""

    op: str
    failure: str = ""  # a cell that failed, timed out, stalled or could not replay: X
    unchanged: str = ""  # why the switch left its code alone (SWITCH_NO_IR_DIFF): B, untimed
    correctness_a: Correctness | None = None  # None: the provider runs no accuracy tests
    correctness_b: Correctness | None = None
    convert_layouts_a: int | None = None  # scoped to the launches the timer measured
    convert_layouts_b: int | None = None
    #: Per run order ("AB": A first, "BA": B first), the operator's delta in % (positive:
    #: B faster), None where no round of that order has one.
    order_deltas_pct: dict[str, float | None] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class WorkloadClass:
    op: str
    cls: str
    why: str

    def to_json(self) -> dict:
        return {"op": self.op, "class": self.cls, "why": self.why}


def classify(e: Evidence, *, gain_pct: float = GAIN_PCT,
             regression_pct: float = REGRESSION_PCT) -> WorkloadClass:
    """The one class of a workload, with the reason in words."""
    def out(cls: str, why: str) -> WorkloadClass:
        return WorkloadClass(op=e.op, cls=cls, why=why)

    if e.failure:
        return out("X", e.failure)
    a, b = e.correctness_a, e.correctness_b
    for side, check in (("A", a), ("B", b)):
        if check is not None and check.problem:
            return out("X", f"side {side}'s accuracy tests could not run: {check.problem}")
    if a is not None and b is not None:
        if not a.ok and not b.ok:
            return out("X", f"correctness fails on both sides (A {a.failed}, B {b.failed} failed)")
        if a.ok and not b.ok:
            return out("K", f"correctness fails on side B only ({b.failed} of "
                            f"{b.passed + b.failed} failed; side A passes {a.passed})")
        if not a.ok:
            return out("X", f"correctness fails on side A only ({a.failed} failed): the "
                            "reference itself is wrong")
    if e.unchanged:  # identical TTGIR need not be identical code (a later stage may differ)
        tested = (f"; tests pass on both sides (A {a.passed}, B {b.passed})" if a and b
                  else "; no accuracy tests ran")
        return out("B", f"the switch left its TTGIR unchanged ({e.unchanged}){tested}")
    if e.convert_layouts_a is None or e.convert_layouts_b is None:
        return out("X", "no layout-conversion count for the measured kernels (their launches "
                        "could not be joined to their TTGIR)")
    orders = [v for v in e.order_deltas_pct.values() if v is not None]
    both = len(orders) == 2 == len(e.order_deltas_pct)
    shown = ", ".join(f"{k} {v:+.2f}%" if v is not None else f"{k} -"
                      for k, v in sorted(e.order_deltas_pct.items())) or "no timing"
    if both and all(v <= -regression_pct for v in orders):
        return out("R", f"slower by {regression_pct:g}% or more in both run orders ({shown})")
    down = e.convert_layouts_b < e.convert_layouts_a
    topology = f"layout conversions {e.convert_layouts_a} -> {e.convert_layouts_b}"
    if not down:
        return out("B", f"{topology}: not down ({shown})")
    if both and all(v >= gain_pct for v in orders):
        return out("G", f"{topology}, faster by {gain_pct:g}% or more in both run orders ({shown})")
    return out("C", f"{topology}, but not faster by {gain_pct:g}% in both run orders ({shown})")


#: From the strongest claim for the candidate to none at all.
RANK = {c: i for i, c in enumerate(("G", "C", "B", "R", "K", "X"))}


def demotes(sealed: str, derived: str) -> bool:
    """Whether ``derived`` claims no more than ``sealed`` (equal counts as no promotion)."""
    return RANK.get(derived, len(RANK)) >= RANK.get(sealed, len(RANK))
