"""zl_core.stats: the per-shape test, sequential looks, campaign FDR, degenerate inputs.

Error-rate and power simulations are in tests/test_stats_simulations.py.
"""

from __future__ import annotations

import json
import math
import random

import pytest
from zl_core.foundation.errors import BadInputError
from zl_core.stats import (
    ALTERNATING,
    COUNTERBALANCED,
    FASTER,
    INCONCLUSIVE,
    MIXED,
    NO_CHANGE,
    SLOWER,
    Plan,
    adaptive_looks,
    adaptive_stop,
    alternating_order,
    judge_campaign,
    round_order,
    spending,
)
from zl_core.stats.fdr import benjamini_hochberg, simes, two_stage
from zl_core.stats.order import ORDERS
from zl_core.stats.special import t_cdf, t_quantile, t_sf
from zl_core.stats.validate import decimal_step

ORDER = alternating_order(range(1, 41))


def shape(a, b):
    return {r: (x, y) for r, (x, y) in enumerate(zip(a, b, strict=True), start=1)}


def judge_one(a, b, plan=None, **kw):
    plan = plan or Plan.fixed(len(a))
    return judge_campaign({"op": {"s": shape(a, b)}}, ORDER, plan, **kw).operators[0].shapes[0]


def from_deltas(deltas):
    """A and B latencies whose log ratios are exactly ``deltas`` (log scale)."""
    return [math.exp(d) for d in deltas], [1.0] * len(deltas)


# --------------------------------------------------------------------------- special


def test_student_t_matches_tables():
    for df, q in [(1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423)]:
        assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-4)
    assert t_quantile(0.995, 2) == pytest.approx(9.9248, abs=1e-3)
    assert t_sf(2.2281, 10) == pytest.approx(0.025, abs=1e-5)
    assert t_cdf(-2.2281, 10) == pytest.approx(0.025, abs=1e-5)
    assert t_sf(0.0, 5) == pytest.approx(0.5)
    assert t_sf(math.inf, 3) == 0.0 and t_sf(-math.inf, 3) == 1.0


def test_t_quantile_inverts_the_tail_across_degrees_of_freedom_and_levels():
    # fractional degrees of freedom (pooled and Satterthwaite ones) and the small tails of
    # many looks: the quantile's tail is the asked one to 1e-10 relative
    for df in (1.0, 1.7, 3.0, 6.5, 20.3, 57.9, 400.0, 9e4):
        for p in (0.5001, 0.9, 0.975, 0.99875, 0.99999, 1 - 1e-9):
            if df > 1e3 and p < 0.9:
                continue  # the tail's continued fraction itself is slow there (1e-8)
            t = t_quantile(p, df)
            assert t_sf(t, df) == pytest.approx(1.0 - p, rel=1e-10), (df, p)
    assert t_quantile(0.5, 7.0) == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- the shape test


def test_estimate_removes_the_first_process_penalty():
    # effect +3%, the first process of every round 2% slower: A-first rounds read
    # 1.03 * 1.02, B-first rounds 1.03 / 1.02, plus a little noise
    rng = random.Random(1)
    ys = [math.log(1.03) + (1 if r % 2 else -1) * math.log(1.02) + rng.gauss(0, 0.002)
          for r in range(1, 11)]
    st = judge_one(*from_deltas(ys))
    assert st.test.estimate_pct == pytest.approx(3.0, abs=0.3)
    assert st.test.order_penalty_pct == pytest.approx(2.0, abs=0.3)
    assert st.verdict == FASTER
    # the same rounds said to run A first every time: the order cannot be removed, so
    # no verdict at all (the effect and the penalty are confounded)
    same = judge_campaign({"op": {"s": shape(*from_deltas(ys))}}, dict.fromkeys(range(1, 11), "AB"),
                          Plan.fixed(10)).operators[0].shapes[0]
    assert same.verdict == INCONCLUSIVE and same.test.look is None and same.test.p_value == 1.0
    assert any("10 round(s) ran A first and 0 B first" in n for n in same.notes)


def test_interval_is_the_student_t_interval_of_the_order_model():
    ys = [0.031, 0.027, 0.035, 0.029, 0.033, 0.026]
    st = judge_one(*from_deltas(ys))
    ga, gb = ys[0::2], ys[1::2]  # A-first rounds 1, 3, 5; B-first 2, 4, 6
    ma, mb = sum(ga) / 3, sum(gb) / 3
    sse = sum((y - ma) ** 2 for y in ga) + sum((y - mb) ** 2 for y in gb)
    se = math.sqrt(sse / 4 * (1 / 3 + 1 / 3) / 4)
    half = t_quantile(0.975, 4) * se
    mu = (ma + mb) / 2
    assert st.test.df == 4 and st.test.look == 6 and st.test.looks_planned == 1
    assert st.test.estimate_pct == pytest.approx(math.expm1(mu) * 100)
    assert st.test.ci_low_pct == pytest.approx(math.expm1(mu - half) * 100)
    assert st.test.ci_high_pct == pytest.approx(math.expm1(mu + half) * 100)
    assert st.verdict == FASTER and st.test.p_faster < 0.025


def test_sign_agreement_is_described_not_required():
    rng = random.Random(3)
    ys = [math.log(1.05) + rng.gauss(0, 0.01) for _ in range(20)]
    ys[7] = -0.002  # one round the other way
    st = judge_one(*from_deltas(ys))
    assert st.sign_agree == 19 and st.verdict == FASTER


def test_verdicts_no_change_straddle_and_threshold():
    tight = judge_one(*from_deltas([0.001, -0.001, 0.0005, -0.0005, 0.0, 0.0002] * 2))
    assert tight.verdict == NO_CHANGE
    wide = judge_one(*from_deltas([0.02, -0.01, 0.0, 0.015, 0.005, -0.003]))
    assert wide.verdict == INCONCLUSIVE
    small = from_deltas([math.log(1.005) + d for d in (0.0002, -0.0002) * 5])
    assert judge_one(*small).verdict == NO_CHANGE
    assert judge_one(*small, Plan.fixed(10, threshold_pct=0.25)).verdict == FASTER
    slow = judge_one([1.0] * 6, [1.02, 1.03, 1.025, 1.04, 1.02, 1.03])
    assert slow.verdict == SLOWER and slow.test.ci_high_pct < -1


@pytest.mark.parametrize("seed", range(5))
def test_mde_is_bounded_and_is_the_smallest_effect_a_look_calls(seed):
    rng = random.Random(seed)
    ys = [rng.gauss(0, 0.01) for _ in range(10)]
    st = judge_one(*from_deltas(ys))
    mde = st.test.mde_pct  # on the estimate's side of zero, beyond the 1% threshold
    assert math.isfinite(mde) and abs(mde) > 1.0 and (mde > 0) == (st.test.estimate_pct >= 0)
    want = FASTER if mde > 0 else SLOWER
    mu = math.log1p(st.test.estimate_pct / 100)

    def verdict_at(effect_pct):
        shift = math.log1p(effect_pct / 100) - mu
        return judge_one(*from_deltas([y + shift for y in ys])).verdict

    outward = math.copysign(1e-6, mde)
    assert verdict_at(mde + outward) == want
    assert verdict_at(mde - outward) != want
    called = judge_one(*from_deltas([y + 0.06 for y in ys]))
    assert called.verdict == FASTER and called.test.mde_pct < called.test.estimate_pct


# --------------------------------------------------------------------------- degenerate inputs


def test_ties_never_give_a_zero_width_decision():
    st = judge_one([0.0016] * 4, [0.0015] * 4)  # the audit's case: +6.7% in every round
    assert st.verdict == INCONCLUSIVE and st.test.tie_floored
    assert st.test.ci_high_pct - st.test.ci_low_pct > 10
    assert any("printed resolution" in n for n in st.notes)
    # the same at a resolution that does support the call
    fine = judge_one([1.05] * 6, [1.0] * 6)
    assert fine.verdict == FASTER and fine.test.ci_low_pct < 5.0 < fine.test.ci_high_pct
    assert decimal_step(0.0016) == pytest.approx(1e-4) and decimal_step(1200.0) == 100.0
    rng = random.Random(2)
    for _ in range(200):  # any all-equal rounds: the interval keeps a width
        n = rng.randint(4, 12)
        a, b = round(rng.uniform(0.001, 10), rng.randint(1, 6)), round(rng.uniform(0.001, 10), 3)
        st = judge_one([a] * n, [b] * n)
        assert st.test.ci_high_pct > st.test.ci_low_pct


def test_non_numeric_latencies_are_refused_and_bad_numbers_skipped():
    with pytest.raises(BadInputError, match=r"op s round 2 side A: latency '1.5' is not a number"):
        judge_one([1.0, "1.5", 1.0, 1.0], [1.0] * 4)
    with pytest.raises(BadInputError, match="side B: latency True"):
        judge_one([1.0] * 4, [1.0, True, 1.0, 1.0])
    a = [1.05, 0.0, 1.05, math.nan, 1.05, 1.05, 1.05, 1.05, -2.0]
    b = [1.0, 1.0, None, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    st = judge_one(a, b)
    assert st.n == 5 and sum("skipped" in n for n in st.notes) == 4
    assert any("round 3 skipped: B latency None" in n for n in st.notes)
    assert st.deltas_pct[1] is None and st.deltas_pct[0] == pytest.approx(5.0)


def test_overflow_is_refused():
    with pytest.raises(BadInputError, match="beyond float range"):
        judge_one([1e308] * 6, [1e-10] * 6)


def test_counterbalanced_order_cancels_a_first_process_penalty_that_grows():
    # no effect; the first process of round r is slower by 0.2% * r (a trend the
    # order term, a constant, cannot absorb). Alternating order leaks the trend into
    # the estimate; counterbalanced order (AB BA BA AB ...) cancels it every 4 rounds.
    def judged(scheme: str):
        order = round_order(scheme, range(1, 13))
        ys = [ORDERS[order[r]] * math.log1p(0.002 * r) for r in range(1, 13)]
        return judge_campaign({"op": {"s": shape(*from_deltas(ys))}}, order,
                              Plan.fixed(12, round_order=scheme)).operators[0].shapes[0]

    alternating, counterbalanced = judged(ALTERNATING), judged(COUNTERBALANCED)
    assert abs(alternating.test.estimate_pct) > 0.08  # half the per-round step, every round
    assert abs(counterbalanced.test.estimate_pct) < 0.01
    assert round_order(COUNTERBALANCED, range(1, 9)) == {
        1: "AB", 2: "BA", 3: "BA", 4: "AB", 5: "AB", 6: "BA", 7: "BA", 8: "AB"}
    assert alternating_order(range(1, 4)) == {1: "AB", 2: "BA", 3: "AB"}
    assert Plan.fixed(6).round_order == COUNTERBALANCED and Plan.fixed(6).to_json()["round_order"] == COUNTERBALANCED
    with pytest.raises(BadInputError, match="round order 'ABAB'"):
        Plan.adaptive(10, round_order="ABAB")



def test_bad_plans_and_orders_are_refused():
    for bad in (lambda: Plan.fixed(2), lambda: Plan.fixed(3), lambda: Plan.adaptive(3),
                lambda: Plan.fixed(6, threshold_pct=-1),
                lambda: Plan.fixed(6, threshold_pct=100), lambda: Plan.fixed(6, confidence=1.0),
                lambda: Plan.adaptive(10, looks=[4, 12]), lambda: Plan.fixed(6.5)):
        with pytest.raises(BadInputError):
            bad()
    with pytest.raises(BadInputError, match="run order"):
        judge_campaign({"op": {"s": shape([1.0] * 4, [1.0] * 4)}}, {1: "AB", 2: "BA"}, Plan.fixed(4))
    with pytest.raises(BadInputError, match="pair"):
        judge_campaign({"op": {"s": {1: 1.0}}}, ORDER, Plan.fixed(4))


# --------------------------------------------------------------------------- sequential looks


def test_adaptive_looks_and_the_error_split():
    assert adaptive_looks(20) == (4, 6, 8, 10, 12, 14, 16, 18, 20)
    assert adaptive_looks(15)[-2:] == (14, 15) and adaptive_looks(4) == (4,)
    plan = Plan.adaptive(20)
    assert spending(plan.looks) == pytest.approx([0.5 / 8] * 8 + [0.5])  # half of alpha at the last
    rng = random.Random(4)
    ys = [math.log(1.04) + rng.gauss(0, 0.01) for _ in range(20)]
    st = judge_one(*from_deltas(ys), plan)
    assert st.test.looks_taken == 9 and st.test.look_confidence == pytest.approx(1 - 0.05 * 0.5)
    fixed = judge_one(*from_deltas(ys))  # one look at 20 with all of alpha: narrower
    assert fixed.test.ci_high_pct - fixed.test.ci_low_pct < st.test.ci_high_pct - st.test.ci_low_pct


def test_estimate_interval_mde_and_p_values_agree_at_every_look():
    plan = Plan.adaptive(20)
    rng = random.Random(6)
    for _ in range(40):
        effect = rng.choice([0.0, 1.0, 2.5, -2.5, 4.0])
        ys = [math.log1p(effect / 100) + rng.gauss(0, 0.012) for _ in range(20)]
        a, b = from_deltas(ys)
        for done in plan.looks:
            st = judge_campaign({"op": {"s": shape(a, b)}}, ORDER, plan,
                                rounds_done={"op": done}).operators[0].shapes[0]
            t = st.test
            assert t.look == done and t.ci_low_pct < t.estimate_pct < t.ci_high_pct
            assert (t.verdict == FASTER) == (t.p_faster < 0.025)
            assert (t.verdict == SLOWER) == (t.p_slower < 0.025)
            if t.verdict == FASTER:
                assert 1.0 < t.mde_pct < t.estimate_pct
            if t.verdict == SLOWER:  # the MDE is on the estimate's side
                assert t.estimate_pct < t.mde_pct < -1.0
            if t.verdict != INCONCLUSIVE:
                assert t.decided_at is not None and t.decided_at <= done


def test_adaptive_stop_only_at_looks():
    plan = Plan.adaptive(12)
    a, b = from_deltas([math.log(0.7) + d for d in (0.01, -0.01, 0.005, -0.004, 0.0, 0.01, -0.01)])
    data = {"gemm": {"s": shape(a, b)}}
    op = judge_campaign(data, ORDER, plan, rounds_done={"gemm": 3}).operators[0]
    assert adaptive_stop(op, plan) == (False, "3 round(s) done; next look at round 4")
    assert op.shapes[0].verdict == INCONCLUSIVE and "a verdict needs at least 4" in op.shapes[0].notes[-1]
    op = judge_campaign(data, ORDER, plan, rounds_done={"gemm": 4}).operators[0]
    stop, why = adaptive_stop(op, plan)
    assert stop and op.verdict == SLOWER and "decided" in why
    empty = judge_campaign({"x": {}}, ORDER, plan, rounds_done={"x": 4}).operators[0]
    assert adaptive_stop(empty, plan)[0]
    null = judge_campaign({"x": {"s": shape(*from_deltas([0.01, -0.012] * 6))}}, ORDER, plan).operators[0]
    assert adaptive_stop(null, plan)[0] and "budget spent" in adaptive_stop(null, plan)[1]


# --------------------------------------------------------------------------- operators and FDR


def test_simes_and_benjamini_hochberg():
    assert simes([0.01, 0.04, 0.5]) == pytest.approx(0.03)
    assert simes([]) == 1.0
    assert benjamini_hochberg([0.01, 0.035, 0.02, 0.9], 0.05) == {0, 1, 2}
    assert benjamini_hochberg([0.01, 0.04, 0.02, 0.9], 0.05) == {0, 2}
    assert benjamini_hochberg([0.03, 0.04, 0.9], 0.05) == set()
    selected, called = two_stage([[0.001, 0.5], [0.6, 0.7], [0.02, 0.025]], 0.05)
    assert selected == {0, 2} and all(called[i] for i in selected)


def _op(rng, effects, n=10, sd=0.01):
    return {f"s{i}": shape(*from_deltas([math.log1p(e / 100) + rng.gauss(0, sd) for _ in range(n)]))
            for i, e in enumerate(effects)}


def test_operator_verdicts_counts_mixed_and_the_mean():
    rng = random.Random(8)
    data = {"slow": _op(rng, [-5, -5, -5, 0]), "mixed": _op(rng, [6, -6, 0]),
            "flat": _op(rng, [0, 0], sd=0.001), "faint": _op(rng, [1.8] * 10, sd=0.015)}
    v = judge_campaign(data, ORDER, Plan.fixed(10))
    slow = v.operator("slow")
    assert slow.verdict == SLOWER and slow.counts[SLOWER] == 3
    assert slow.text.startswith("SLOWER (3/4 shapes SLOWER, 1 ")
    assert v.operator("mixed").verdict == MIXED
    assert v.operator("flat").verdict == NO_CHANGE
    faint = v.operator("faint")  # no shape clears +1% alone; their per-round mean does
    assert faint.mean_shapes == 10 and faint.mean_verdict == FASTER and faint.verdict == FASTER
    assert faint.counts[FASTER] < 10
    doc = v.to_json()
    json.dumps(doc, allow_nan=False)
    assert doc["fdr_level"] == 0.05 and "Benjamini-Hochberg" in doc["fdr_text"]


def test_a_shape_called_alone_can_lose_its_call_to_the_campaign_fdr():
    rng = random.Random(12)
    ys = [math.log(1.01) + 0.005 + rng.gauss(0, 0.004) for _ in range(6)]
    lone = judge_one(*from_deltas(ys))
    assert lone.verdict == FASTER and 0.005 < lone.test.p_value < 0.05
    data = {"op": {"s": shape(*from_deltas(ys))}}
    data.update({f"null{i}": _op(rng, [0.0] * 5, n=6, sd=0.004) for i in range(100)})
    v = judge_campaign(data, ORDER, Plan.fixed(6))
    st = v.operator("op").shapes[0]
    # a one-shape operator has no siblings to borrow from: the same test as alone
    assert st.test.variance == "own" and st.test.df == lone.test.df
    assert st.test.p_value == lone.test.p_value
    assert st.test.verdict == FASTER and st.verdict == INCONCLUSIVE
    assert any("false-discovery control" in n for n in st.notes)
    assert v.tested == 101 and v.selected == 0


def test_missing_rounds_are_noted_and_the_rest_judged():
    rng = random.Random(10)
    full = _op(rng, [5.0], n=10)["s0"]
    holes = {r: p for r, p in full.items() if r not in (3, 7)}
    v = judge_campaign({"op": {"s": holes, "t": full}}, ORDER, Plan.fixed(10))
    st = v.operator("op").shapes[0]
    assert st.n == 8 and st.deltas_pct[2] is None
    assert "round 3: no comparable row" in st.notes and "round 7: no comparable row" in st.notes
    assert st.verdict == FASTER
    assert v.operator("op").mean_shapes == 0 or v.operator("op").mean is None
