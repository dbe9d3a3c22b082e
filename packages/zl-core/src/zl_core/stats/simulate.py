"""Seeded synthetic campaigns: the simulations behind docs/statistics.md.

Every figure there comes from these functions, run small by the tests and large by
``benchmarks/stats_error_rates.py``. A latency is ``exp(noise)`` times a base of
1 ms, with the switch's effect on side B (``A / B = 1 + effect``). Noise models:

- ``side_pct``: independent per side, per shape, per round (Gaussian on the log
  scale, or Student's t(3) scaled to the same standard deviation);
- ``round_pct``: one factor per round on both sides and every shape (pairing cancels it);
- ``process_pct``: one factor per process (operator, round, side), shared by its shapes;
- ``drift_pct``: slow drift in run order: a slowdown of that much per process run
  plus a swing of ten times that much over every 40 runs;
- ``disturb_every`` / ``disturb_pct``: one process in N runs slower by that much,
  every shape of it (a co-tenant, a clock dip);
- ``first_pct``: the process that runs first in a round is slower by that much;
- ``slow_cell_pct``: one process of an operator (of a share ``slow_cell_ops`` of the
  operators), drawn at random among its rounds and sides, slower by that much on every
  shape (a disturbed cell);
- ``ar_rho``: the side noise of each shape is a slowly varying state of its side,
  AR(1) over the rounds with this correlation (the same standard deviation);
- ``state_pct`` / ``state_rho``: a slowly varying state of each side shared by every
  shape of its process (how a card's state drifts), AR(1) over the rounds.

:func:`operator_rounds` also takes each shape's own side noise (``side_pct``), a factor
on side B's (``b_factor``) and the operator's latency (``base_ms``), for campaigns whose
noise differs between operators and shapes (:mod:`.simulate_noise`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

import attrs

from .judge import adaptive_stop, judge_campaign
from .order import COUNTERBALANCED, round_order
from .records import CampaignVerdict, Plan
from .sequential import FASTER, INCONCLUSIVE, MIXED, NO_CHANGE, SLOWER

VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE)


@attrs.frozen(kw_only=True)
class Noise:
    name: str
    side_pct: float = 1.0
    heavy_tails: bool = False  # Student's t(3) instead of Gaussian
    round_pct: float = 0.0
    process_pct: float = 0.0
    drift_pct: float = 0.0
    disturb_every: int = 0
    disturb_pct: float = 5.0
    first_pct: float = 0.0
    slow_cell_pct: float = 0.0
    slow_cell_ops: float = 1.0
    ar_rho: float = 0.0
    state_pct: float = 0.0
    state_rho: float = 0.0


#: The models of the issue's "Done when", at 1% per-side noise.
MODELS = (
    Noise(name="Gaussian"),
    Noise(name="t(3)", heavy_tails=True),
    Noise(name="common shifts", side_pct=0.7, round_pct=5.0, process_pct=0.7),
    Noise(name="slow drift", drift_pct=0.3),
    Noise(name="1 in 10 disturbed", disturb_every=10, disturb_pct=5.0),
    Noise(name="first-process penalty", first_pct=2.0),
)


def _draw(rng: random.Random, sd_pct: float, heavy: bool) -> float:
    if sd_pct == 0:
        return 0.0
    if heavy:  # t(3) has variance 3
        return sd_pct / 100.0 * rng.gauss(0.0, 1.0) / math.sqrt(rng.gammavariate(1.5, 2.0) / 3.0) / math.sqrt(3.0)
    return rng.gauss(0.0, sd_pct / 100.0)


def operator_rounds(rng: random.Random, effects: Sequence[float], rounds: int, noise: Noise,
                    side_pct: Sequence[float] | None = None, *, scheme: str = COUNTERBALANCED,
                    b_factor: float = 1.0, base_ms: float = 1.0
                    ) -> dict[str, dict[int, tuple[float, float]]]:
    """One operator's latencies: ``{shape: {round: (a, b)}}`` for rounds 1..rounds, each
    round's sides run in ``scheme``'s order."""
    shapes: dict[str, dict[int, tuple[float, float]]] = {f"s{i}": {} for i in range(len(effects))}
    order = round_order(scheme, range(1, rounds + 1))
    slow = None
    if noise.slow_cell_pct and rng.random() < noise.slow_cell_ops:
        slow = (rng.randint(1, rounds), rng.choice("AB"))
    state = {(side, i): None for side in "AB" for i in range(len(effects))}
    shared = {"A": None, "B": None}
    for r in range(1, rounds + 1):
        common = _draw(rng, noise.round_pct, False)
        logs = {}
        for pos, side in enumerate(order[r]):
            run = 2 * (r - 1) + pos  # processes in run order
            drift = noise.drift_pct / 100.0 * (run + 10.0 * math.sin(2.0 * math.pi * run / 40.0))
            process = common + _draw(rng, noise.process_pct, False) + drift
            if noise.disturb_every and rng.random() < 1.0 / noise.disturb_every:
                process += math.log1p(noise.disturb_pct / 100.0)
            if pos == 0:
                process += math.log1p(noise.first_pct / 100.0)
            if slow == (r, side):
                process += math.log1p(noise.slow_cell_pct / 100.0)
            if noise.state_pct:
                process += _step(rng, shared, side, noise.state_pct, noise.state_rho)
            logs[side] = process
        for i, effect in enumerate(effects):
            sd = side_pct[i] if side_pct is not None else noise.side_pct
            a = base_ms * math.exp(logs["A"] + _side(rng, state, ("A", i), sd, noise))
            b = base_ms * math.exp(logs["B"] + _side(rng, state, ("B", i), sd * b_factor, noise)) / (
                1.0 + effect / 100.0)
            shapes[f"s{i}"][r] = (a, b)
    return shapes


def _side(rng: random.Random, state: dict, key: tuple[str, int], sd: float, noise: Noise) -> float:
    """One side's noise for one shape this round: independent, or the next step of its AR(1)."""
    if not noise.ar_rho:
        return _draw(rng, sd, noise.heavy_tails)
    return _step(rng, state, key, sd, noise.ar_rho)


def _step(rng: random.Random, state: dict, key: object, sd: float, rho: float) -> float:
    """The next value of a stationary AR(1) state of standard deviation ``sd`` percent."""
    prev = state[key]
    x = _draw(rng, sd, False) if prev is None else rho * prev + math.sqrt(1 - rho * rho) * _draw(rng, sd, False)
    state[key] = x
    return x


def judge_operators(data: Mapping[str, dict], plan: Plan, *, adaptive: bool) -> CampaignVerdict:
    """Judge synthetic operators as zl would: at the end of a fixed campaign, or (adaptive)
    each operator stopped by :func:`adaptive_stop` at the first look that allows it."""
    order = round_order(plan.round_order, range(1, plan.max_rounds + 1))
    if not adaptive:
        return judge_campaign(data, order, plan)
    done = {op: _stop_look(op, shapes, order, plan, len(data)) for op, shapes in data.items()}
    return judge_campaign(data, order, plan, rounds_done=done)


def _stop_look(op: str, shapes: dict, order: dict[int, str], plan: Plan, operators: int) -> int:
    """The look at which the adaptive loop stops this operator.

    ``decided_at`` is the first look at which a shape was decided on its own, so no look
    before the latest of them has every shape decided; the walk starts there."""
    full = judge_campaign({op: shapes}, order, plan).operators[0]
    decided = [s.test.decided_at for s in full.shapes]
    if decided and None in decided:  # a shape no look decided: the budget runs out
        return plan.max_rounds
    start = max((d for d in decided if d is not None), default=plan.looks[0])
    for look in plan.looks:
        if look < start:
            continue
        one = judge_campaign({op: shapes}, order, plan, rounds_done={op: look}).operators[0]
        if adaptive_stop(one, plan, campaign_operators=operators)[0]:
            return look
    return plan.max_rounds


def shape_rates(noise: Noise, effect: float, plan: Plan, trials: int, seed: int, *,
                adaptive: bool = False) -> dict:
    """One-shape campaigns: how often each verdict, and the mean rounds used."""
    rng = random.Random(seed)
    counts = dict.fromkeys(VERDICTS, 0)
    rounds = 0
    by_round: dict[int, int] = {}
    for _ in range(trials):
        data = {"op": operator_rounds(rng, [effect], plan.max_rounds, noise, scheme=plan.round_order)}
        op = judge_operators(data, plan, adaptive=adaptive).operators[0]
        verdict = op.shapes[0].verdict
        counts[verdict] += 1
        rounds += op.rounds_done
        if verdict in (FASTER, SLOWER):
            by_round[op.rounds_done] = by_round.get(op.rounds_done, 0) + 1
    return {"counts": counts, "trials": trials, "mean_rounds": rounds / trials,
            "called_by_round": dict(sorted(by_round.items()))}


def power_by_rounds(noise: Noise, effect: float, rounds: Sequence[int], trials: int,
                    seed: int, *, scheme: str = COUNTERBALANCED) -> dict[int, int]:
    """Fixed campaigns of each length in ``rounds``: shapes called in the effect's direction.

    Each trial draws the longest campaign once and judges every shorter one on its first
    rounds (common random numbers), so the comparison between lengths is not blurred by
    independent draws."""
    rng = random.Random(seed)
    want = FASTER if effect > 0 else SLOWER
    called = dict.fromkeys(rounds, 0)
    longest = max(rounds)
    order = round_order(scheme, range(1, longest + 1))
    for _ in range(trials):
        shapes = operator_rounds(rng, [effect], longest, noise, scheme=scheme)
        for n in rounds:
            verdict = judge_campaign({"op": shapes}, order, Plan.fixed(n, round_order=scheme),
                                     rounds_done={"op": n})
            called[n] += verdict.operators[0].shapes[0].verdict == want
    return called


def campaign_any_false(noise: Noise, plan: Plan, campaigns: int, seed: int, *, ops: int = 100,
                       shapes: int = 10, effect: float = 0.0, adaptive: bool = False,
                       side_pct: Callable[[int], float] | None = None) -> dict:
    """Null campaigns (no shape beyond the threshold): how many call any operator."""
    rng = random.Random(seed)
    noise_of = [side_pct(i) if side_pct else noise.side_pct for i in range(shapes)]
    any_false = 0
    false_ops = 0
    own_calls = 0
    for _ in range(campaigns):
        data = {f"op{j}": operator_rounds(rng, [effect] * shapes, plan.max_rounds, noise, noise_of,
                                          scheme=plan.round_order)
                for j in range(ops)}
        verdict = judge_operators(data, plan, adaptive=adaptive)
        called = sum(1 for o in verdict.operators if o.verdict in (FASTER, SLOWER, MIXED))
        false_ops += called
        any_false += called > 0
        own_calls += sum(1 for o in verdict.operators for s in o.shapes
                         if s.test.verdict in (FASTER, SLOWER))
    return {"campaigns": campaigns, "any_false": any_false, "false_operators": false_ops,
            "shape_calls_before_fdr": own_calls}


def mixed_noise(shapes: int) -> Callable[[int], float]:
    """Per-shape side noise spread evenly on a log scale from 3% down to 0.1%."""
    return lambda i: 3.0 * (0.1 / 3.0) ** (i / max(1, shapes - 1))
