"""The plan a campaign is judged by, and the frozen records the judgement returns."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import attrs

from zl_core.foundation.errors import BadInputError

from .order import COUNTERBALANCED, check_round_order
from .sequential import MIN_LOOK_ROUNDS, SeriesTest, adaptive_looks
from .validate import check_confidence, check_rounds, check_threshold

#: Which rules judged a campaign, written into every judgement (``plan.rules``).
#: 1 (no key): each shape on its own rounds, 3 rounds at least, equal error shares
#: over looks with intersected intervals. 2: variances pooled by latency class across
#: operators, 2 rounds of each order at least (4 in all), serial correlation widens
#: intervals, half the error budget at the last look. 3: variances anchored on their own
#: operator, the campaign kept only where it decides more than the operator alone, serial
#: correlation per operator as a state shared by its shapes. 4: the campaign step tests each
#: series with the p-value of "within the threshold" as a band, not a doubled one-sided
#: p-value. 5: intervals on each series' own rounds, widened where its shapes share each
#: round's noise. 6: an operator whose Simes p-value clears the Bonferroni bound q / M is
#: tested inside at q, as alone. docs/statistics.md section 11.
RULES = 6


@attrs.frozen(kw_only=True)
class Plan:
    """Threshold, confidence, the planned looks and the order each round ran its sides
    (see :mod:`.order`). Build with :meth:`fixed` or :meth:`adaptive`."""

    threshold_pct: float
    confidence: float
    max_rounds: int
    looks: tuple[int, ...]
    round_order: str = COUNTERBALANCED

    @classmethod
    def fixed(cls, rounds: int, *, threshold_pct: float = 1.0, confidence: float = 0.95,
              round_order: str = COUNTERBALANCED) -> Plan:
        """A campaign of ``rounds`` rounds judged once, at the end."""
        rounds = check_rounds("rounds", rounds, MIN_LOOK_ROUNDS)
        return cls(threshold_pct=check_threshold(threshold_pct),
                   confidence=check_confidence(confidence), max_rounds=rounds, looks=(rounds,),
                   round_order=check_round_order(round_order))

    @classmethod
    def adaptive(cls, max_rounds: int, *, threshold_pct: float = 1.0, confidence: float = 0.95,
                 looks: Sequence[int] | None = None, round_order: str = COUNTERBALANCED) -> Plan:
        """Rounds added until every shape is decided or ``max_rounds`` are spent."""
        max_rounds = check_rounds("--max-rounds", max_rounds, MIN_LOOK_ROUNDS)
        if looks is None:
            chosen = adaptive_looks(max_rounds)
        else:
            chosen = tuple(sorted({check_rounds("look", x, MIN_LOOK_ROUNDS) for x in looks}))
            if not chosen or chosen[-1] > max_rounds:
                raise BadInputError(f"looks {list(looks)} must lie in {MIN_LOOK_ROUNDS}.."
                                    f"{max_rounds} (the --max-rounds)")
        return cls(threshold_pct=check_threshold(threshold_pct),
                   confidence=check_confidence(confidence), max_rounds=max_rounds, looks=chosen,
                   round_order=check_round_order(round_order))

    @property
    def fdr_level(self) -> float:
        """Campaign false-discovery level: the same alpha as every interval."""
        return round(1.0 - self.confidence, 12)

    @property
    def up(self) -> float:
        return math.log1p(self.threshold_pct / 100.0)

    @property
    def down(self) -> float:
        return math.log1p(-self.threshold_pct / 100.0)

    def is_look(self, rounds_done: int) -> bool:
        return rounds_done in self.looks

    def to_json(self) -> dict:
        return {"threshold_pct": self.threshold_pct, "confidence": self.confidence,
                "max_rounds": self.max_rounds, "looks": list(self.looks),
                "fdr_level": self.fdr_level, "round_order": self.round_order, "rules": RULES}


@attrs.frozen(kw_only=True)
class ShapeVerdict:
    op: str
    key: Hashable  # the shape's key exactly as the caller gave it
    rounds: tuple[int, ...]  # every round of the operator up to rounds_done
    deltas_pct: tuple[float | None, ...]  # per round, (A / B - 1) * 100; None: missing
    median_delta_pct: float  # descriptive, like the per-round range and signs
    min_delta_pct: float
    max_delta_pct: float
    sign_agree: int  # usable rounds with the estimate's sign (described, never required)
    sign_p: float
    a_spread_pct: float  # (max - min) / median * 100 of side A over the usable rounds
    b_spread_pct: float
    test: SeriesTest
    verdict: str  # after the campaign's false-discovery control
    notes: tuple[str, ...]
    latencies: tuple[tuple[int, tuple[float, float]], ...] = ()  # usable (round, (a, b)) pairs

    @property
    def n(self) -> int:
        return self.test.n

    def to_json(self) -> dict:
        """Flat JSON: the test's fields beside the description; NaN and inf as null."""
        out = {"op": self.op, "shape": _plain(self.key)}
        for name in ("rounds", "deltas_pct", "median_delta_pct", "min_delta_pct",
                     "max_delta_pct", "sign_agree", "sign_p", "a_spread_pct", "b_spread_pct"):
            out[name] = _plain(getattr(self, name))
        test = {f.name: _plain(getattr(self.test, f.name)) for f in attrs.fields(SeriesTest)}
        test["own_verdict"] = test.pop("verdict")
        test.pop("notes")
        out.update(test)
        out["verdict"] = self.verdict
        out["notes"] = list(self.notes)
        return out


@attrs.frozen(kw_only=True)
class OperatorVerdict:
    op: str
    rounds_done: int
    verdict: str  # FASTER | SLOWER | MIXED | NO_CHANGE | INCONCLUSIVE
    text: str  # e.g. "SLOWER (5/6 shapes SLOWER, 1 INCONCLUSIVE; per-round mean -3.1% [...])"
    counts: dict[str, int]  # final shape verdict -> shapes
    shapes: tuple[ShapeVerdict, ...]
    mean: SeriesTest | None  # the per-round operator statistic; None below two complete shapes
    mean_shapes: int  # shapes in that statistic (present in every round)
    mean_verdict: str | None  # its call after the FDR step
    family_p: float  # Simes p-value of the operator's family (1.0: nothing tested)
    selected: bool  # passed the campaign's BH step
    all_decided: bool  # every shape has its own FASTER, SLOWER or NO_CHANGE
    sign_changed_shapes: int

    def to_json(self) -> dict:
        return {"op": self.op, "rounds_done": self.rounds_done, "verdict": self.verdict,
                "text": self.text, "counts": dict(self.counts), "n_shapes": len(self.shapes),
                "mean": _test_json(self.mean), "mean_shapes": self.mean_shapes,
                "mean_verdict": self.mean_verdict, "family_p": _plain(self.family_p),
                "selected": self.selected, "all_decided": self.all_decided,
                "sign_changed_shapes": self.sign_changed_shapes}


@attrs.frozen(kw_only=True)
class CampaignVerdict:
    plan: Plan
    operators: tuple[OperatorVerdict, ...]
    fdr_level: float
    tested: int  # operators with at least one tested hypothesis (M)
    selected: int  # operators the BH step selected (R)
    fdr_text: str

    def operator(self, op: str) -> OperatorVerdict:
        for o in self.operators:
            if o.op == op:
                return o
        raise KeyError(op)

    def to_json(self) -> dict:
        return {"plan": self.plan.to_json(), "fdr_level": self.fdr_level, "tested": self.tested,
                "selected": self.selected, "fdr_text": self.fdr_text,
                "operators": [o.to_json() for o in self.operators]}


def _test_json(test: SeriesTest | None) -> dict | None:
    if test is None:
        return None
    return {f.name: _plain(getattr(test, f.name)) for f in attrs.fields(SeriesTest)}


def _plain(value: object) -> object:
    # JSON has no NaN/Infinity: undefined values travel as null.
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)
