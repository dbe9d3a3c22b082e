"""An operator alone and in company, on the same data; campaign steps compared on it.

Each trial draws the tracked operators' rounds once and judges them alone and inside
200-operator campaigns whose neighbours are quieter, as noisy, or noisier (the
neighbours' draws are the same numbers scaled, so the rows differ only by that factor).
The judgement is ``judge_campaign``'s; the campaign step is then re-applied to its
p-values under each step of :data:`STEPS`, so every step is compared on the same
p-values (the step changes no interval and no p-value). docs/statistics.md ("Company")
shows them at full size (``benchmarks/stats_error_rates.py``), tests/test_stats_noise.py
small.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from . import fdr
from .judge import judge_campaign
from .order import round_order
from .records import CampaignVerdict, OperatorVerdict, Plan
from .sequential import FASTER, SLOWER
from .simulate import Noise, operator_rounds

CALLS = (FASTER, SLOWER)
MEAN = "mean"

Families = Sequence[Sequence[float]]
Step = Callable[[Families, float, Sequence[float]], tuple[set[int], dict[int, set[int]]]]


# --------------------------------------------------------------------------- steps compared


def step_bb(families: Families, q: float, weights: Sequence[float]) -> tuple[set[int], dict[int, set[int]]]:
    """Rules 5's step: Benjamini-Bogomolov, every selected family at q R / M."""
    return fdr.two_stage(families, q, keep_alone=False)


def step_gate(families: Families, q: float, weights: Sequence[float]) -> tuple[set[int], dict[int, set[int]]]:
    """A step blind to the neighbours: a family is selected when its Simes p-value is at
    most q / M (Bonferroni over the operators) and tested inside at q / M."""
    m = len(families)
    selected = {i for i, f in enumerate(families) if fdr.simes(f) <= q / m}
    return selected, {i: fdr.benjamini_hochberg(families[i], q / m) for i in selected}


def step_storey(families: Families, q: float, weights: Sequence[float]) -> tuple[set[int], dict[int, set[int]]]:
    """Adaptive Benjamini-Bogomolov: q divided by Storey's estimate of the share of
    operators without an effect (lambda 1/2), at both stages."""
    m = len(families)
    simes = [fdr.simes(f) for f in families]
    pi0 = min(1.0, (sum(p > 0.5 for p in simes) + 1) / (0.5 * m)) if m else 1.0
    selected = fdr.benjamini_hochberg(simes, q / pi0)
    level = q / pi0 * len(selected) / m if m else 0.0
    return selected, {i: fdr.benjamini_hochberg(families[i], level) for i in selected}


def step_kept(families: Families, q: float, weights: Sequence[float]) -> tuple[set[int], dict[int, set[int]]]:
    """Benjamini-Bogomolov, and a family whose Simes p-value clears the Bonferroni bound
    q / M tested inside at q, as it would be alone."""
    return fdr.two_stage(families, q, keep_alone=True)


def step_weighted(families: Families, q: float, weights: Sequence[float]) -> tuple[set[int], dict[int, set[int]]]:
    """Weighted Benjamini-Bogomolov: operators selected on p / w, with weights w (mean 1)
    from each operator's own noise (the inverse of its shapes' median own variance), so a
    quiet operator is favoured over noisy ones; inside at q R / M."""
    m = len(families)
    selected = fdr.benjamini_hochberg([fdr.simes(f) / w for f, w in zip(families, weights, strict=True)], q)
    level = q * len(selected) / m if m else 0.0
    return selected, {i: fdr.benjamini_hochberg(families[i], level) for i in selected}


#: The steps the company tables compare, by name.
STEPS: dict[str, Step] = {"bb": step_bb, "gate": step_gate, "storey": step_storey,
                          "weighted": step_weighted, "kept": step_kept}


def members(op: OperatorVerdict) -> list[tuple[object, float, str]]:
    """An operator's family as ``judge_campaign`` lists it: (the per-round mean and) every
    tested shape, each as (label, p-value, own verdict)."""
    out: list[tuple[object, float, str]] = []
    if op.mean is not None and op.mean.look is not None:
        out.append((MEAN, op.mean.p_value, op.mean.verdict))
    out += [(i, s.test.p_value, s.test.verdict) for i, s in enumerate(op.shapes) if s.test.look is not None]
    return out


def restep(verdict: CampaignVerdict, step: Step) -> list[dict[object, str]]:
    """Each operator's calls after ``step`` on the campaign's p-values: label -> direction.
    A call needs the member's own verdict (its interval) and the step's keeping it."""
    fams = [members(op) for op in verdict.operators]
    tested = [i for i, f in enumerate(fams) if f]
    precision = [1.0 / max(1e-12, _median([s.test.own_sd_pct for s in verdict.operators[i].shapes])) ** 2
                 for i in tested]
    weights = [len(tested) * w / sum(precision) for w in precision]
    _, called = step([[p for _, p, _ in fams[i]] for i in tested], verdict.fdr_level, weights)
    out: list[dict[object, str]] = [{} for _ in fams]
    for t, i in enumerate(tested):
        for k in called.get(t, set()):
            label, _, own = fams[i][k]
            if own in CALLS:
                out[i][label] = own
    return out


def _median(xs: list[float]) -> float:
    xs = sorted(x for x in xs if x == x)
    return xs[len(xs) // 2] if xs else 1.0


def op_call(calls: dict[object, str]) -> str | None:
    """The operator's call from its members' calls: one direction, or None (MIXED too)."""
    directions = set(calls.values())
    return directions.pop() if len(directions) == 1 else None


# --------------------------------------------------------------------------- paired company


#: The tracked operators of a company trial: (label, shapes with the effect, effect %).
TRACKED = (("3 shapes at +3%", 3, 3.0), ("every shape at +2%", 10, 2.0))


def company_pairs(trials: int, seed: int, *, factors: Sequence[float] = (0.5, 1.0, 2.0), ops: int = 200,
                  shapes: int = 10, sd: float = 1.0, affected: float = 0.1, plan: Plan | None = None,
                  steps: Sequence[str] = tuple(STEPS)) -> dict:
    """Paired trials: both tracked operators of :data:`TRACKED` drawn once (1% per side),
    judged alone and in campaigns of ``ops`` operators (the two tracked ones and ``ops -
    2`` neighbours whose noise is each factor times theirs, ``affected`` of them with the
    3-shape pattern at +3%).

    Returns ``{(tracked label, factor or None, step): counts}`` with counts ``true``
    (shapes with the effect, over the trials), ``own`` (called right by their own test),
    ``right`` (called right after the step), ``op_right`` (operator verdict right),
    ``nulls`` and ``false`` (its shapes without the effect, and their calls), and paired
    against the same data alone: ``lost`` and ``gained`` (true shapes called alone and
    not here, or here and not alone), ``op_lost``, ``own_lost`` (true shapes whose own
    interval called them alone and not here: the campaign's rounds showed a serial state
    of the card, which widens), ``floor`` (trials whose operator alone has a Simes p-value
    at most q / M, the Bonferroni bound) and ``below_floor`` (true shapes such an operator
    called alone, its own interval here too, and the step here did not: the kept step
    promises none)."""
    plan = plan or Plan.fixed(8)
    order = round_order(plan.round_order, range(1, plan.max_rounds + 1))
    gauss = Noise(name="g")
    rng = random.Random(seed)
    keys = ("true", "own", "right", "op_right", "nulls", "false", "lost", "gained", "op_lost", "own_lost",
            "floor", "below_floor")
    out: dict = {}
    n_hit = round((ops - 2) * affected)
    for _ in range(trials):
        tracked = {label: operator_rounds(rng, [effect if i < hit else 0.0 for i in range(shapes)],
                                          plan.max_rounds, gauss, [sd] * shapes)
                   for label, hit, effect in TRACKED}
        neighbour_seed = rng.getrandbits(64)
        alone = {label: judge_campaign({label: data}, order, plan).operators[0] for label, data in tracked.items()}
        alone_calls = {label: restep_alone(op) for label, op in alone.items()}
        settings: list[tuple[float | None, CampaignVerdict | None]] = [(None, None)]
        for factor in factors:
            nrng = random.Random(neighbour_seed)  # the same draws at every factor, scaled
            data = dict(tracked)
            for j in range(ops - len(tracked)):
                effects = [3.0 if j < n_hit and i < 3 else 0.0 for i in range(shapes)]
                data[f"n{j}"] = operator_rounds(nrng, effects, plan.max_rounds, gauss, [sd * factor] * shapes)
            settings.append((factor, judge_campaign(data, order, plan)))
        for company, verdict in settings:
            stepped = {name: restep(verdict, STEPS[name]) for name in steps} if verdict else {}
            for t, (label, hit, _) in enumerate(TRACKED):
                own_op = alone[label] if verdict is None else verdict.operators[t]
                bound = plan.fdr_level / (verdict.tested if verdict else 1)
                for name in steps:
                    calls = alone_calls[label] if verdict is None else stepped[name][t]
                    c = out.setdefault((label, company, name), dict.fromkeys(keys, 0))
                    _count(c, own_op, calls, alone_calls[label], _own(alone[label]), hit, shapes,
                           alone[label].family_p <= bound)
    return out


def restep_alone(op: OperatorVerdict) -> dict[object, str]:
    """An operator's calls judged alone (every step agrees with one operator)."""
    calls: dict[object, str] = {MEAN: op.mean_verdict} if op.mean_verdict in CALLS else {}
    calls.update({i: s.verdict for i, s in enumerate(op.shapes) if s.verdict in CALLS})
    return calls


def _own(op: OperatorVerdict) -> set[int]:
    return {i for i, s in enumerate(op.shapes) if s.test.verdict == FASTER}


def _count(c: dict, op: OperatorVerdict, calls: dict, alone: dict, alone_own: set[int], hit: int, shapes: int,
           floor: bool) -> None:
    c["true"] += hit
    c["nulls"] += shapes - hit
    own = {i for i in _own(op) if i < hit}
    c["own"] += len(own)
    right = {i for i in range(hit) if calls.get(i) == FASTER}
    was = {i for i in range(hit) if alone.get(i) == FASTER}
    c["right"] += len(right)
    c["false"] += sum(1 for i in range(hit, shapes) if i in calls) + sum(
        1 for i in range(hit) if calls.get(i) == SLOWER)
    c["op_right"] += op_call(calls) == FASTER
    c["op_lost"] += op_call(alone) == FASTER and op_call(calls) != FASTER
    c["lost"] += len(was - right)
    c["gained"] += len(right - was)
    c["own_lost"] += len({i for i in alone_own if i < hit} - own)  # the campaign showed a card state
    c["floor"] += floor
    c["below_floor"] += len((was & own) - right) if floor else 0


# --------------------------------------------------------------------------- steps on campaigns


def step_rates(verdicts: Sequence[tuple[CampaignVerdict, Callable[[int, object], str | None]]],
               steps: Sequence[str] = tuple(STEPS)) -> dict[str, dict]:
    """Each step re-applied to judged campaigns; ``want(j, i)`` names shape i of operator
    j's true direction (None: no effect beyond the threshold; ``i`` may be :data:`MEAN`).
    Per step: ``true``, ``right``, ``false`` (calls of a shape in a direction it has not),
    ``fdp`` (over the campaign's shape calls, mean over campaigns), ``op_fdp`` (the false
    share of each called operator's calls, its mean included, averaged over the called
    operators: what the two-stage rule bounds; mean over campaigns),
    ``campaigns_with_call`` and ``campaigns_with_false_call``."""
    out = {}
    for name in steps:
        c: dict[str, float] = dict.fromkeys(
            ("true", "right", "false", "campaigns_with_call", "campaigns_with_false_call"), 0)
        fdp = op_fdp = 0.0
        for verdict, want in verdicts:
            stepped = restep(verdict, STEPS[name])
            false = calls = 0
            shares = []
            for j, (op, got) in enumerate(zip(verdict.operators, stepped, strict=True)):
                for i in range(len(op.shapes)):
                    w = want(j, i)
                    c["true"] += w is not None
                    if i in got:
                        calls += 1
                        c["right"] += got[i] == w
                        false += got[i] != w
                if got:
                    shares.append(sum(1 for k, v in got.items() if v != want(j, k)) / len(got))
            c["false"] += false
            c["campaigns_with_call"] += calls > 0
            c["campaigns_with_false_call"] += false > 0
            fdp += false / max(1, calls)
            op_fdp += sum(shares) / max(1, len(shares))
        c["campaigns"] = len(verdicts)
        c["fdp"] = fdp / max(1, len(verdicts))
        c["op_fdp"] = op_fdp / max(1, len(verdicts))
        out[name] = c
    return out


def judged_campaigns(effects: Callable[[random.Random], list[tuple[list[float], list[float], float]]],
                     plan: Plan, campaigns: int, seed: int, noise: Noise | None = None
                     ) -> list[tuple[CampaignVerdict, Callable[[int, object], str | None]]]:
    """``campaigns`` campaigns judged once, for :func:`step_rates`: ``effects(rng)`` lists
    each operator's (shape effects %, shape side noise %, latency ms)."""
    rng = random.Random(seed)
    order = round_order(plan.round_order, range(1, plan.max_rounds + 1))
    thr = plan.threshold_pct
    out = []
    for _ in range(campaigns):
        ops = effects(rng)
        data = {f"op{j}": operator_rounds(rng, e, plan.max_rounds, noise or Noise(name="g"), sd,
                                          scheme=plan.round_order, base_ms=base)
                for j, (e, sd, base) in enumerate(ops)}

        out.append((judge_campaign(data, order, plan), _direction(ops, thr)))
    return out


def _direction(ops: list[tuple[list[float], list[float], float]], thr: float
               ) -> Callable[[int, object], str | None]:
    """``want(j, i)``: shape i's (or the per-round mean's) true direction in operator j."""
    def want(j: int, i: object) -> str | None:
        effects = ops[j][0]
        if isinstance(i, int):
            e = effects[i]
        else:  # MEAN: the per-round mean of log ratios
            e = 100.0 * math.expm1(sum(math.log1p(x / 100.0) for x in effects) / len(effects))
        return FASTER if e > thr else SLOWER if e < -thr else None
    return want


def alone_at_the_edge(trials: int, seed: int, *, shapes: int = 10, plan: Plan | None = None) -> int:
    """Operators with every shape at the threshold (the band's edge, where "no effect
    beyond the threshold" is still true), each judged alone: how many are called. A step
    that judged every operator of a campaign as it is judged alone would call a campaign
    of M such operators with probability 1 - (1 - rate)^M."""
    plan = plan or Plan.fixed(8)
    order = round_order(plan.round_order, range(1, plan.max_rounds + 1))
    rng = random.Random(seed)
    called = 0
    for _ in range(trials):
        data = {"op": operator_rounds(rng, [plan.threshold_pct] * shapes, plan.max_rounds, Noise(name="g"))}
        called += bool(restep_alone(judge_campaign(data, order, plan).operators[0]))
    return called
