"""The one judgement of an A/B campaign, shared by the adaptive loop and the report.

``judge_campaign`` takes plain data (per operator, per shape, per round: the A and B
latencies; the order each round ran its sides) and a :class:`Plan`, and returns
frozen records: every shape's sequential test, every operator's per-round mean, and
the campaign's false-discovery step on top. ``adaptive_stop`` reads one operator of
that judgement. Nothing else decides a verdict, so the loop and the report agree by
construction.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import TypeVar

import attrs
from attrs import evolve as attrs_evolve

from zl_core.foundation.errors import BadInputError
from zl_core.foundation.verdicts import CALLS, SHAPE_VERDICTS

from . import fdr
from .looks import look_stats
from .order import ORDERS
from .pooling import noise_class
from .records import CampaignVerdict, OperatorVerdict, Plan, ShapeVerdict
from .sequential import (
    FASTER,
    INCONCLUSIVE,
    MIXED,
    NO_CHANGE,
    LookStat,
    SeriesTest,
    judge_series,
)
from .shape_test import Observation, median, pct, sign_test_p, spread_pct
from .validate import check_rounds, decimal_step, latency, log_ratio, tie_variance

#: What names a shape within its operator (an index, a label): any hashable value.
ShapeKey = TypeVar("ShapeKey", bound=Hashable)
Latencies = Mapping[str, Mapping[ShapeKey, Mapping[int, tuple[object, object]]]]


#: The noise class of the operators' per-round means (pooled and checked among themselves).
MEAN_CLASS = "mean"


def judge_campaign(latencies: Latencies[ShapeKey], round_order: Mapping[int, str], plan: Plan, *,
                   rounds_done: Mapping[str, int] | None = None) -> CampaignVerdict:
    """Judge every operator and shape of a campaign under ``plan``.

    ``latencies[op][shape][round] = (a_ms, b_ms)``; a missing round is simply absent
    (or None on a side). ``round_order[round]`` is ``"AB"`` or ``"BA"``.
    ``rounds_done[op]`` (default: the operator's highest round) sets the looks taken.
    """
    if not isinstance(plan, Plan):
        raise BadInputError(f"plan {plan!r} is not a stats Plan; build one with Plan.fixed "
                            "or Plan.adaptive")
    prepared = []
    for op, shapes in latencies.items():
        done = _rounds_done(op, shapes, rounds_done)
        step = _resolution(op, shapes)
        series = [_observe(op, key, by_round, round_order, done, step) for key, by_round in shapes.items()]
        prepared.append((op, done, series, _mean_observations(series, done)))
    looks = look_stats(prepared, plan, mean_class=MEAN_CLASS)

    ops = []
    for i, (op, done, series, mean_obs) in enumerate(prepared):
        judged = [_shape(op, done, s, _judge(looks, (i, j), plan, done, len(s.obs)), plan)
                  for j, s in enumerate(series)]
        mean = None
        if mean_obs is not None:
            obs, m = mean_obs
            mean = (_judge(looks, (i, MEAN_CLASS), plan, done, len(obs)), m)
        ops.append((op, done, judged, mean))

    families = []
    for _, _, shape_verdicts, mean in ops:
        ps = [mean[0].p_value] if mean and mean[0].look is not None else []
        families.append(ps + [s.test.p_value for s in shape_verdicts if s.test.look is not None])
    tested = [i for i, f in enumerate(families) if f]
    selected_t, called_t = fdr.two_stage([families[i] for i in tested], plan.fdr_level, keep_alone=True)
    selected = {tested[i] for i in selected_t}
    called = {tested[i]: members for i, members in called_t.items()}

    operators = tuple(
        _operator(op, done, series, mean, families[i], i in selected, called.get(i, set()), plan)
        for i, (op, done, series, mean) in enumerate(ops))
    q = plan.fdr_level
    text = (f"campaign false-discovery control at {q:.0%}: Benjamini-Hochberg over the "
            f"{len(tested)} tested operator(s) (Simes p-value of each operator's shapes and "
            f"per-round mean) selected {len(selected)}; inside a selected operator its shapes "
            f"are called by Benjamini-Hochberg at {q:.0%} x {len(selected)}/{len(tested) or 1}, "
            f"or at {q:.0%}, as alone, where its Simes p-value is at most {q:.0%}/{len(tested) or 1}")
    return CampaignVerdict(plan=plan, operators=operators, fdr_level=q, tested=len(tested),
                           selected=len(selected), fdr_text=text)


def adaptive_stop(op: OperatorVerdict, plan: Plan, *, campaign_operators: int = 1
                  ) -> tuple[bool, str]:
    """Stop an operator's rounds? Only at a planned look, once every shape is decided and
    every call is one the campaign's false-discovery step keeps whatever the other
    operators show, or when ``plan.max_rounds`` are spent. Returns (stop, reason).

    ``op`` is the operator judged alone. Its calls are kept for sure when its family's
    Simes p-value is at most ``q / M``, with M the campaign's operators, and its own step
    alone kept them: in the campaign its p-values are no larger (the campaign's variance
    is kept only where it decides more), so its family still clears the Bonferroni bound
    and is tested inside at ``q``, as alone (fdr.two_stage)."""
    done, total = op.rounds_done, len(op.shapes)
    undecided = sum(1 for s in op.shapes if s.test.verdict == INCONCLUSIVE)
    if done >= plan.max_rounds:
        return True, f"budget spent: {done}/{plan.max_rounds} rounds, {undecided}/{total} shapes undecided"
    if not plan.is_look(done):
        nxt = next(x for x in plan.looks if x > done)
        return False, f"{done} round(s) done; next look at round {nxt}"
    if total == 0:
        return True, f"no comparable shapes after {done} round(s); more rounds cannot decide"
    if not op.all_decided:
        return False, f"{undecided}/{total} shapes undecided after {done} of at most {plan.max_rounds} rounds"
    calls: list[tuple[str, str | None]] = [(s.test.verdict, s.verdict) for s in op.shapes if s.test.verdict in CALLS]
    if op.mean is not None and op.mean.verdict in CALLS:
        calls.append((op.mean.verdict, op.mean_verdict))
    bound = plan.fdr_level / max(1, campaign_operators)
    fragile = sum(1 for own, kept in calls if kept != own or op.family_p > bound)
    if fragile:
        return False, (f"all {total} shapes decided after {done} rounds, but {fragile} call(s) "
                       f"could still be withdrawn by the false-discovery step over "
                       f"{campaign_operators} operator(s) (family p {op.family_p:.2g} above "
                       f"{bound:.2g}, or a call its own step withdrew)")
    return True, f"all {total} shapes decided at the look after round {done}"


# --------------------------------------------------------------------------- shapes


def _rounds_done(op: str, shapes: Mapping, given: Mapping[str, int] | None) -> int:
    if given is not None and op in given:
        return check_rounds(f"rounds_done of {op}", given[op], 0)
    rounds = [r for by_round in shapes.values() for r in by_round]
    return max(rounds, default=0)


def _resolution(op: str, shapes: Mapping) -> float | None:
    """The finest printed step among the operator's latencies: one instrument prints every
    shape of an operator, so a shape whose values happen to be round numbers (1.0 ms)
    is not taken as known only to the whole millisecond."""
    steps = []
    for key, by_round in shapes.items():
        for r, raw in by_round.items():
            if isinstance(raw, (tuple, list)) and len(raw) == 2:
                for side, value in zip("AB", raw, strict=True):
                    v = latency(value, f"{op} {key} round {r} side {side}")
                    if v is not None:
                        steps.append(decimal_step(v))
    return min(steps, default=None)


@attrs.frozen
class _Series:
    key: Hashable
    obs: list[Observation]
    pairs: dict[int, tuple[float, float]]
    notes: list[str]
    cls: int


def _observe(op: str, key: Hashable, by_round: Mapping[int, tuple[object, object]],
             round_order: Mapping[int, str], done: int, step: float | None) -> _Series:
    notes: list[str] = []
    pairs: dict[int, tuple[float, float]] = {}
    for r in range(1, done + 1):
        where = f"{op} {key} round {r}"
        if r not in by_round:
            notes.append(f"round {r}: no comparable row")
            continue
        raw = by_round[r]
        if not isinstance(raw, (tuple, list)) or len(raw) != 2:
            raise BadInputError(f"{where}: expected an (A, B) pair of latencies, got {raw!r}")
        a, b = latency(raw[0], f"{where} side A"), latency(raw[1], f"{where} side B")
        if a is None or b is None:
            side, value = ("A", raw[0]) if a is None else ("B", raw[1])
            notes.append(f"round {r} skipped: {side} latency {value!r} is not a positive finite number")
            continue
        pairs[r] = (a, b)
    tie = tie_variance(pairs.values(), step)
    obs = [Observation(round_no=r, order=_order(round_order, r, op), y=log_ratio(a, b, f"{op} {key} round {r}"),
                       tie_var=tie) for r, (a, b) in pairs.items()]
    cls = noise_class(median([a for a, _ in pairs.values()])) if pairs else 0
    return _Series(key=key, obs=obs, pairs=pairs, notes=notes, cls=cls)


def _mean_observations(series: list[_Series], done: int) -> tuple[list[Observation], int] | None:
    """The per-round operator statistic: mean log ratio over the shapes present in every
    round. Shapes of one process share its noise, so the round, not the shape, is the
    unit: the spread of these per-round means carries that shared noise."""
    complete = [s.obs for s in series if s.obs and len(s.obs) == done]
    if len(complete) < 2:
        return None
    m = len(complete)
    rows = list(zip(*complete, strict=True))  # per round, that round's observation of every shape
    return [Observation(round_no=row[0].round_no, order=row[0].order, y=sum(o.y for o in row) / m,
                        tie_var=sum(o.tie_var for o in row) / m ** 2) for row in rows], m


SeriesId = tuple[int, object]  # (operator index, shape index or MEAN_CLASS)


def _judge(looks: dict[int, dict[SeriesId, LookStat]], key: SeriesId, plan: Plan, done: int,
           usable: int) -> SeriesTest:
    stats = {look: by_id[key] for look, by_id in looks.items() if key in by_id}
    return judge_series(stats, looks=plan.looks, rounds_done=done, confidence=plan.confidence,
                        up=plan.up, down=plan.down, usable=usable)


def _shape(op: str, done: int, s: _Series, test: SeriesTest, plan: Plan) -> ShapeVerdict:
    rounds = tuple(range(1, done + 1))
    deltas = [pct(o.y) for o in s.obs]
    sign = 1 if test.estimate_pct > 0 else -1 if test.estimate_pct < 0 else 0
    pos = sum(1 for d in deltas if d > 0)
    neg = sum(1 for d in deltas if d < 0)
    agree = pos if sign > 0 else neg if sign < 0 else max(pos, neg)
    return ShapeVerdict(
        op=op, key=s.key, rounds=rounds,
        deltas_pct=tuple(pct(math.log(s.pairs[r][0] / s.pairs[r][1])) if r in s.pairs else None
                         for r in rounds),
        median_delta_pct=median(deltas), min_delta_pct=min(deltas, default=math.nan),
        max_delta_pct=max(deltas, default=math.nan), sign_agree=agree, sign_p=sign_test_p(pos, neg),
        a_spread_pct=spread_pct([a for a, _ in s.pairs.values()]),
        b_spread_pct=spread_pct([b for _, b in s.pairs.values()]),
        test=test, verdict=test.verdict, notes=tuple(s.notes) + test.notes,
        latencies=tuple(s.pairs.items()))


def _order(round_order: Mapping[int, str], r: int, op: str) -> int:
    order = round_order.get(r)
    if order not in ORDERS:
        raise BadInputError(f"{op} round {r}: run order {order!r} is not 'AB' or 'BA'; "
                            "pass the order every measured round ran its sides")
    return ORDERS[order]


# --------------------------------------------------------------------------- operators


def _operator(op: str, done: int, series: list[ShapeVerdict], mean: tuple[SeriesTest, int] | None,
              family: list[float], selected: bool, called: set[int], plan: Plan) -> OperatorVerdict:
    # family members in the order judge_campaign listed them: [mean] + tested shapes
    mean_tested = mean is not None and mean[0].look is not None
    member = iter(range(1 if mean_tested else 0, len(family)))
    final: list[ShapeVerdict] = []
    for shape in series:
        verdict, notes = shape.test.verdict, list(shape.notes)
        index = next(member) if shape.test.look is not None else None
        if verdict in CALLS and index not in called:
            verdict = INCONCLUSIVE
            notes.append(f"{shape.test.verdict} on its own at {plan.confidence:.0%}, but not "
                         f"after the campaign's false-discovery control ({plan.fdr_level:.0%})")
        final.append(attrs_evolve(shape, verdict=verdict, notes=tuple(notes)))
    mean_verdict = None
    if mean:
        mean_verdict = mean[0].verdict
        if mean_verdict in CALLS and 0 not in called:
            mean_verdict = INCONCLUSIVE
    counts = {v: 0 for v in SHAPE_VERDICTS}
    for s in final:
        counts[s.verdict] += 1
    directions = {s.verdict for s in final if s.verdict in CALLS}
    if mean_verdict in CALLS:
        directions.add(mean_verdict)
    n = len(final)
    if len(directions) == 2:
        verdict = MIXED
    elif directions:
        verdict = directions.pop()
    elif n and counts[NO_CHANGE] == n:
        verdict = NO_CHANGE
    else:
        verdict = INCONCLUSIVE
    return OperatorVerdict(
        op=op, rounds_done=done, verdict=verdict, text=_text(verdict, counts, n, mean, mean_verdict),
        counts=counts, shapes=tuple(final), mean=mean[0] if mean else None,
        mean_shapes=mean[1] if mean else 0, mean_verdict=mean_verdict,
        family_p=fdr.simes(family) if family else 1.0, selected=selected,
        all_decided=bool(final) and all(s.test.verdict != INCONCLUSIVE for s in final),
        sign_changed_shapes=sum(1 for s in final if s.n and 0 < s.sign_agree < s.n))


def _text(verdict: str, counts: dict[str, int], n: int, mean: tuple[SeriesTest, int] | None,
          mean_verdict: str | None) -> str:
    if n == 0:
        return f"{verdict} (no shapes)"
    lead = verdict if verdict in SHAPE_VERDICTS else FASTER
    parts = [f"{counts[lead]}/{n} shapes {lead}"]
    parts += [f"{counts[v]} {v}" for v in SHAPE_VERDICTS if v != lead and counts[v]]
    text = f"{verdict} ({', '.join(parts)}"
    if mean is not None and mean[0].look is not None:
        t = mean[0]
        text += (f"; per-round mean of {mean[1]} shapes {t.estimate_pct:+.2f}% "
                 f"[{t.ci_low_pct:+.2f}%, {t.ci_high_pct:+.2f}%]")
        if mean_verdict in CALLS:
            text += f" {mean_verdict}"
    return text + ")"
