"""Seeded campaigns whose noise differs between operators, shapes and sides.

Real cards do not give every operator of a latency the same noise: on the H200, the
spread of a shape's per-round deltas between 10 and 100 us was 0.17% for softmax, 0.4-0.7%
for relu, 1.4-2.2% for addmm and 6.8% for one bmm shape. These scenarios put such
operators side by side and count, for the *tracked* operators only, what their own tests
and the campaign step call; docs/statistics.md ("Noise that differs") shows them at full
size (``benchmarks/stats_error_rates.py``), tests/test_stats_noise.py small.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from .records import Plan
from .sequential import FASTER, INCONCLUSIVE, MIXED, SLOWER
from .simulate import Noise, judge_operators, operator_rounds

CALLS = (FASTER, SLOWER)


@attrs.frozen(kw_only=True)
class Op:
    """One synthetic operator: each shape's effect (%) and side noise (% per side)."""

    effects: tuple[float, ...]
    side_pct: tuple[float, ...]
    b_factor: float = 1.0  # side B's noise over side A's
    base_ms: float = 1.0  # latency, which sets the noise class
    tracked: bool = False  # counted by :func:`rates`
    track: tuple[int, ...] | None = None  # only these shapes of a tracked operator (None: all)
    noise: Noise | None = None  # this operator's noise model (None: the campaign's)


Build = Callable[[random.Random], list[Op]]


def uniform(n: int, effect: float, sd: float, **kw) -> Op:
    return Op(effects=(effect,) * n, side_pct=(sd,) * n, **kw)


def rates(build: Build, noise: Noise, plan: Plan, campaigns: int, seed: int, *,
          adaptive: bool = False) -> dict:
    """Judge ``campaigns`` campaigns from ``build`` and count over the tracked operators'
    shapes: ``shapes``; calls by their own test (``own_calls``, ``own_right`` in the
    direction of a true effect beyond the threshold, ``own_wrong`` otherwise); the same
    after the campaign step (``calls``, ``right``, ``wrong``); each direction apart
    (``own_FASTER``, ``own_SLOWER``, ``FASTER``, ``SLOWER``); ``own_decided`` (any own
    verdict but INCONCLUSIVE); ``true`` (shapes beyond the threshold); and per campaign,
    ``campaigns_with_call`` (any operator of the campaign called, tracked or not)."""
    rng = random.Random(seed)
    keys = ("shapes", "true", "own_calls", "own_right", "own_wrong", "calls", "right", "wrong",
            "own_decided", "campaigns_with_call", "op_calls", f"own_{FASTER}", f"own_{SLOWER}", FASTER,
            SLOWER)
    out = dict.fromkeys(keys, 0)
    thr = plan.threshold_pct
    for _ in range(campaigns):
        ops = build(rng)
        data = {f"op{j}": operator_rounds(rng, op.effects, plan.max_rounds, op.noise or noise, op.side_pct,
                                          scheme=plan.round_order, b_factor=op.b_factor,
                                          base_ms=op.base_ms)
                for j, op in enumerate(ops)}
        verdict = judge_operators(data, plan, adaptive=adaptive)
        out["campaigns_with_call"] += any(o.verdict in (FASTER, SLOWER, MIXED) for o in verdict.operators)
        for op, judged in zip(ops, verdict.operators, strict=True):
            if not op.tracked:
                continue
            out["op_calls"] += judged.verdict in (FASTER, SLOWER, MIXED)
            for i, (effect, s) in enumerate(zip(op.effects, judged.shapes, strict=True)):
                if op.track is not None and i not in op.track:
                    continue
                want = FASTER if effect > thr else SLOWER if effect < -thr else None
                out["shapes"] += 1
                out["true"] += want is not None
                out["own_decided"] += s.test.verdict != INCONCLUSIVE
                for prefix, v in (("own_", s.test.verdict), ("", s.verdict)):
                    if v in CALLS:
                        out[prefix + "calls"] += 1
                        out[prefix + v] += 1
                        out[prefix + ("right" if v == want else "wrong")] += 1
    out["campaigns"] = campaigns
    return out


# --------------------------------------------------------------------------- scenarios


def noisier_operator(k: float, *, ops: int = 20, shapes: int = 10, sd: float = 1.0,
                     effect: float = 1.0) -> Build:
    """One tracked operator k times noisier than the other operators of its class, every
    shape of every operator at ``effect`` (the threshold, by default)."""
    def build(rng: random.Random) -> list[Op]:
        return ([uniform(shapes, effect, sd * k, tracked=True)]
                + [uniform(shapes, effect, sd) for _ in range(ops - 1)])
    return build


def noisier_shapes(k: float, *, ops: int = 20, shapes: int = 10, noisy: int = 3, sd: float = 1.0,
                   effect: float = 1.0, tracked_ops: int = 1) -> Build:
    """In every operator, ``noisy`` of its shapes k times noisier than its others (the same
    latency class), every shape at ``effect``; the noisy shapes of the first
    ``tracked_ops`` operators are tracked."""
    side = (sd * k,) * noisy + (sd,) * (shapes - noisy)

    def build(rng: random.Random) -> list[Op]:
        return [Op(effects=(effect,) * shapes, side_pct=side, tracked=j < tracked_ops,
                   track=tuple(range(noisy))) for j in range(ops)]
    return build


def lone(noise: Noise, *, ops: int = 20, shapes: int = 10, sd: float = 1.0,
         effect: float = 1.0) -> Build:
    """One tracked operator under ``noise`` (a serial state, say) among ``ops - 1`` of the
    campaign's noise, every shape at ``effect``."""
    def build(rng: random.Random) -> list[Op]:
        return ([Op(effects=(effect,) * shapes, side_pct=(sd,) * shapes, tracked=True, noise=noise)]
                + [uniform(shapes, effect, sd) for _ in range(ops - 1)])
    return build


def side_b_noisier(k: float, *, ops: int = 20, shapes: int = 10, sd: float = 1.0,
                   effect: float = 1.0) -> Build:
    """One tracked A/B operator whose side B is k times noisier than side A, at ``effect``,
    among A/A controls (no effect, the same noise on both sides)."""
    def build(rng: random.Random) -> list[Op]:
        return ([uniform(shapes, effect, sd, b_factor=k, tracked=True)]
                + [uniform(shapes, 0.0, sd) for _ in range(ops - 1)])
    return build


#: Latency classes of the global-null campaigns and their typical noise (% per side).
CLASSES = ((0.01, 1.0), (0.1, 0.5), (1.0, 0.2), (10.0, 0.1))


def global_null(k: float, *, per_class: int = 50, shapes: int = 10) -> Build:
    """No effect anywhere: ``per_class`` operators in each latency class of
    :data:`CLASSES`, one of each class k times noisier than the rest; every operator tracked."""
    def build(rng: random.Random) -> list[Op]:
        out = []
        for base, sd in CLASSES:
            out.append(uniform(shapes, 0.0, sd * k, base_ms=base, tracked=True))
            out += [uniform(shapes, 0.0, sd, base_ms=base, tracked=True) for _ in range(per_class - 1)]
        return out
    return build


def company(factor: float | None, *, ops: int = 200, shapes: int = 10, sd: float = 1.0,
            effect: float = 3.0, affected: float = 0.1, hit: int = 3) -> Build:
    """One tracked operator (``hit`` shapes at ``effect``, the rest none) alone
    (``factor`` None) or among ``ops - 1`` neighbours whose noise is ``factor`` times its
    own, ``affected`` of them with the same effect pattern."""
    def pattern(on: bool) -> tuple[float, ...]:
        return tuple(effect if on and i < hit else 0.0 for i in range(shapes))

    def build(rng: random.Random) -> list[Op]:
        tracked = Op(effects=pattern(True), side_pct=(sd,) * shapes, tracked=True)
        if factor is None:
            return [tracked]
        n_hit = round((ops - 1) * affected)
        return [tracked] + [Op(effects=pattern(j < n_hit), side_pct=(sd * factor,) * shapes)
                            for j in range(ops - 1)]
    return build
