"""Seeded synthetic campaigns at the scale users run: power and errors after every step.

:mod:`.simulate` draws one operator's rounds and judges small campaigns; this module
draws whole campaigns (200 operators x 10 shapes, a share of them affected) and counts
what survives the campaign's false-discovery step, which is what a user reads.
docs/statistics.md's campaign tables are ``benchmarks/stats_error_rates.py`` running
these functions; tests/test_stats_campaigns.py runs them small.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from .judge import judge_campaign
from .order import round_order
from .records import CampaignVerdict, Plan
from .sequential import FASTER, INCONCLUSIVE, SLOWER
from .simulate import Noise, judge_operators, operator_rounds

CALLS = (FASTER, SLOWER)


@attrs.frozen(kw_only=True)
class Scenario:
    """A campaign: ``ops`` operators of ``shapes`` shapes; the first ``affected`` share of
    the operators has ``affected_shapes`` shapes with ``effect`` percent (B faster)."""

    ops: int = 200
    shapes: int = 10
    affected: float = 0.1
    affected_shapes: int = 3
    effect: float = 3.0
    null_effect: float = 0.0  # every other shape's true effect
    #: only these rounds of every shape are kept (None: all)
    keep_rounds: Callable[[int], bool] | None = None

    def effects(self, j: int) -> list[float]:
        hit = j < round(self.ops * self.affected)
        return [self.effect if hit and i < self.affected_shapes else self.null_effect
                for i in range(self.shapes)]

    def is_true(self, j: int, i: int, threshold_pct: float) -> bool:
        """Whether the shape has an effect beyond the threshold (one a call may find)."""
        hit = j < round(self.ops * self.affected) and i < self.affected_shapes
        return abs(self.effect if hit else self.null_effect) > threshold_pct


def draw(rng: random.Random, scenario: Scenario, noise: Noise, plan: Plan) -> dict[str, dict]:
    data = {}
    for j in range(scenario.ops):
        shapes = operator_rounds(rng, scenario.effects(j), plan.max_rounds, noise, scheme=plan.round_order)
        if scenario.keep_rounds is not None:
            shapes = {key: {r: v for r, v in by_round.items() if scenario.keep_rounds(r)}
                      for key, by_round in shapes.items()}
        data[f"op{j}"] = shapes
    return data


def campaign_power(noise: Noise, plan: Plan, scenario: Scenario, campaigns: int, seed: int, *,
                   adaptive: bool = False) -> dict:
    """Judge ``campaigns`` seeded campaigns and count, over all of them:

    - ``true_shapes``, ``called`` (true shapes called the right way after the FDR step),
      ``own_called`` (the same by their own test, before it);
    - ``false_calls`` (calls of shapes without an effect beyond the threshold) and
      ``calls``; ``fdp`` is the mean over campaigns of false calls / max(calls, 1);
    - ``campaigns_with_false_call``; ``false_own`` (false calls of the shapes' own tests);
    - adaptive: ``mean_rounds``, ``stopped_early`` (operators stopped before the budget
      with a call at their stop) and ``lost`` (those whose stop-time calls the campaign
      step then withdrew, ``lost_all``: every one of them)."""
    rng = random.Random(seed)
    out: dict[str, float] = dict.fromkeys(("true_shapes", "called", "own_called", "false_calls", "calls",
                         "campaigns_with_false_call", "false_own", "shapes", "stopped_early",
                         "lost", "lost_all"), 0)
    fdp = 0.0
    rounds = 0
    for _ in range(campaigns):
        data = draw(rng, scenario, noise, plan)
        verdict = judge_operators(data, plan, adaptive=adaptive)
        false = calls = 0
        for j, op in enumerate(verdict.operators):
            rounds += op.rounds_done
            for i, s in enumerate(op.shapes):
                true = scenario.is_true(j, i, plan.threshold_pct)
                want = FASTER if scenario.effect > 0 else SLOWER
                out["shapes"] += 1
                out["true_shapes"] += true
                out["called"] += true and s.verdict == want
                out["own_called"] += true and s.test.verdict == want
                out["false_own"] += (not true) and s.test.verdict in CALLS
                if s.verdict in CALLS:
                    calls += 1
                    false += not (true and s.verdict == want)
        if adaptive:
            _count_lost(data, verdict, plan, out)
        out["false_calls"] += false
        out["calls"] += calls
        out["campaigns_with_false_call"] += false > 0
        fdp += false / max(calls, 1)
    out["campaigns"] = campaigns
    out["fdp"] = fdp / campaigns
    out["mean_rounds"] = rounds / (campaigns * scenario.ops)
    return out


def _count_lost(data: dict, verdict: CampaignVerdict, plan: Plan, out: dict) -> None:
    order = round_order(plan.round_order, range(1, plan.max_rounds + 1))
    for op in verdict.operators:
        if op.rounds_done >= plan.max_rounds:
            continue
        alone = judge_campaign({op.op: data[op.op]}, order, plan,
                               rounds_done={op.op: op.rounds_done}).operators[0]
        at_stop = [(s.key, s.test.verdict) for s in alone.shapes if s.test.verdict in CALLS]
        if not at_stop:
            continue
        out["stopped_early"] += 1
        final = {s.key: s.verdict for s in op.shapes}
        kept = sum(1 for key, v in at_stop if final.get(key) == v)
        out["lost"] += kept < len(at_stop)
        out["lost_all"] += kept == 0


def undecided(verdict: CampaignVerdict) -> int:
    return sum(1 for o in verdict.operators for s in o.shapes if s.verdict == INCONCLUSIVE)
