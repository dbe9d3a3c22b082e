"""Campaign-scale statistics: pooled variances, run-order support, serial correlation,
stopping that the campaign step keeps. Each bound of docs/statistics.md's campaign
tables, on fewer seeded campaigns than benchmarks/stats_error_rates.py draws.
"""

from __future__ import annotations

import math
import random

import pytest
from zl_core.stats import FASTER, INCONCLUSIVE, Plan, adaptive_stop, judge_campaign, round_order
from zl_core.stats.pooling import Pool, Sample, noise_class
from zl_core.stats.serial import Residuals, Serial, moments
from zl_core.stats.simulate import Noise, operator_rounds
from zl_core.stats.simulate_campaigns import Scenario, campaign_power

ORDER = round_order("counterbalanced", range(1, 41))
DEFAULT = Plan.fixed(8)


GAUSS = Noise(name="g")


def _campaign(rng, n_ops, effects, rounds, noise=GAUSS):
    return {f"op{j}": operator_rounds(rng, effects(j), rounds, noise) for j in range(n_ops)}


# --------------------------------------------------------------------------- the Done-when bounds


def test_power_after_the_campaign_step_at_the_default_rounds():
    got = campaign_power(Noise(name="1%"), DEFAULT, Scenario(), 2, 1)
    print(f"\n[200 x 10, +3% at 1%, fixed 8] {got}")
    assert got["called"] >= 0.6 * got["true_shapes"] and got["fdp"] <= 0.05
    quiet = campaign_power(Noise(name="0.2%", side_pct=0.2), DEFAULT, Scenario(effect=1.5), 1, 2)
    print(f"[200 x 10, +1.5% at 0.2%, fixed 8] {quiet}")
    assert quiet["called"] >= 0.7 * quiet["true_shapes"] and quiet["fdp"] <= 0.05


def test_the_false_discovery_step_no_longer_erases_power_at_6_rounds():
    # the audit's campaign: 0.2% of the true shapes survived the step at 6 rounds
    got = campaign_power(Noise(name="1%"), Plan.fixed(6), Scenario(), 1, 3)
    assert got["called"] >= 0.3 * got["true_shapes"]


def test_a_global_null_calls_nothing():
    got = campaign_power(Noise(name="1%"), DEFAULT, Scenario(affected=0.0, effect=0.0), 3, 4)
    assert got["calls"] == 0 and got["campaigns_with_false_call"] == 0


@pytest.mark.parametrize("noise", [Noise(name="every op", slow_cell_pct=20.0),
                                   Noise(name="1 op in 10", slow_cell_pct=20.0, slow_cell_ops=0.1),
                                   Noise(name="quiet", side_pct=0.1, slow_cell_pct=10.0)],
                         ids=lambda n: n.name)
def test_one_slow_cell_at_the_minimum_rounds_does_not_decide(noise):
    got = campaign_power(noise, Plan.fixed(4), Scenario(ops=100, affected=0.0, effect=0.0), 2, 5)
    print(f"\n[one slow cell, {noise.name}, 4 rounds] {got}")
    assert got["false_own"] <= 0.025 * got["shapes"]


def test_a_shape_seen_in_one_run_order_is_never_called():
    # rounds 1, 4, 5, 8, ... ran A first: keep only those; a 2% first-process penalty and
    # a 3% effect, which the shapes' own rounds would otherwise call
    scenario = Scenario(ops=10, affected=1.0, affected_shapes=10, effect=3.0,
                        keep_rounds=lambda r: r % 4 in (0, 1))
    got = campaign_power(Noise(name="first", first_pct=2.0), Plan.fixed(12), scenario, 2, 6)
    assert got["own_called"] == 0 and got["calls"] == 0


@pytest.mark.parametrize("rounds", [6, 10, 20])
def test_serially_correlated_rounds_at_the_threshold_stay_within_5pct(rounds):
    scenario = Scenario(ops=20, affected=0.0, null_effect=1.0)
    got = campaign_power(Noise(name="ar", ar_rho=0.8), Plan.fixed(rounds), scenario, 2, 7)
    print(f"\n[AR(1) 0.8 at +1%, {rounds} rounds] own calls {got['false_own']} of {got['shapes']}")
    assert got["false_own"] <= 0.05 * got["shapes"]


# --------------------------------------------------------------------------- pooling


def test_pooling_borrows_from_other_operators_only():
    rng = random.Random(11)
    lone = _campaign(rng, 1, lambda j: [0.0] * 10, 6)
    alone = judge_campaign(lone, ORDER, Plan.fixed(6)).operators[0].shapes[0]
    assert alone.test.variance == "own" and alone.test.df == 4  # its own operator never counts
    many = _campaign(rng, 30, lambda j: [0.0] * 10, 6)
    pooled = judge_campaign(many, ORDER, Plan.fixed(6)).operators[0].shapes[0]
    assert pooled.test.variance == "pooled" and pooled.test.df > 20
    # the prior's weight is capped at one shape's degrees of freedom per other operator
    assert pooled.test.df <= 4 + 29 * 4


def test_noise_classes_are_latency_decades_centred_on_powers_of_ten():
    assert noise_class(1.0) == 0 and noise_class(0.99) == 0 and noise_class(0.5) == 0
    assert noise_class(0.02) == -2 and noise_class(0.0035) == -2 and noise_class(4.0) == 1


def test_a_shape_whose_spread_is_far_above_its_class_is_not_pooled():
    samples = [Sample(op=f"op{j}", cls=0, s2=1e-4 * (1 + 0.1 * (j % 3)), df=6) for j in range(20)]
    pool = Pool(samples + [Sample(op="loud", cls=0, s2=5e-3, df=6)])
    loud = pool.moderate(Sample(op="loud", cls=0, s2=5e-3, df=6))
    assert loud.df == 6 and loud.var == 5e-3 and "judged on its own rounds" in loud.note
    usual = pool.moderate(Sample(op="op3", cls=0, s2=1.2e-4, df=6))
    assert usual.df > 6 and 1e-4 < usual.var < 1.5e-4


def test_heterogeneous_variances_pool_less():
    even = Pool([Sample(op=f"o{j}", cls=0, s2=1e-4, df=6) for j in range(40)])
    rng = random.Random(3)
    spread = Pool([Sample(op=f"o{j}", cls=0, s2=1e-4 * math.exp(rng.gauss(0, 1.5)), df=6)
                   for j in range(40)])
    assert even.prior("x", 0).df > 5 * spread.prior("x", 0).df


def test_a_disturbed_operator_among_quiet_ones_is_not_called():
    # 40 quiet operators, and one whose round-2 side-B process was 20% slow on every shape
    rng = random.Random(12)
    data = _campaign(rng, 40, lambda j: [0.0] * 5, 4)
    hit = operator_rounds(rng, [0.0] * 5, 4, Noise(name="g"))
    data["hit"] = {k: {r: (a, b * 1.2 if r == 2 else b) for r, (a, b) in v.items()} for k, v in hit.items()}
    op = judge_campaign(data, ORDER, Plan.fixed(4)).operator("hit")
    assert all(s.test.verdict == INCONCLUSIVE for s in op.shapes)
    assert all(s.test.variance == "own" for s in op.shapes)


# --------------------------------------------------------------------------- support and serial


def test_three_rounds_of_one_order_and_one_of_the_other_is_not_a_verdict():
    ys = [0.05, 0.05, 0.051, 0.05, 0.049, 0.05]  # rounds 1..6: AB BA BA AB AB BA
    # rounds 1 and 4 missing: one A-first round (5) and three B-first ones are left
    data = {"op": {"s": {r: (math.exp(y), 1.0) for r, y in enumerate(ys, start=1) if r not in (1, 4)}}}
    st = judge_campaign(data, ORDER, Plan.fixed(6)).operators[0].shapes[0]
    assert st.verdict == INCONCLUSIVE and st.test.look is None and st.test.p_value == 1.0
    assert any("1 round(s) ran A first and 3 B first" in n for n in st.notes)


def test_serial_correlation_is_detected_and_widens_instead_of_calling():
    rng = random.Random(13)
    noise = Noise(name="ar", ar_rho=0.8)
    data = _campaign(rng, 20, lambda j: [1.0] * 10, 10, noise)
    v = judge_campaign(data, ORDER, Plan.fixed(10))
    st = v.operators[0].shapes[0]
    assert st.test.serial_factor > 3 and any("serially correlated" in n for n in st.notes)
    quiet = judge_campaign(_campaign(rng, 20, lambda j: [1.0] * 10, 10), ORDER, Plan.fixed(10))
    assert quiet.operators[0].shapes[0].test.serial_factor == 1.0


def test_serial_fit_recovers_rho_and_its_moments_are_exact_at_zero():
    rng = random.Random(14)
    order = round_order("counterbalanced", range(1, 11))
    series = []
    for _ in range(300):
        x, e = rng.gauss(0, 1), []
        for _r in range(10):
            e.append(x)
            x = 0.6 * x + math.sqrt(1 - 0.36) * rng.gauss(0, 1)
        orders = tuple(1 if order[r] == "AB" else -1 for r in range(1, 11))
        means = {o: sum(y for y, oo in zip(e, orders) if oo == o) / 5 for o in (1, -1)}
        series.append(Residuals(cls=0, rounds=tuple(range(1, 11)), orders=orders,
                                e=tuple(y - means[o] for y, o in zip(e, orders))))
    assert Serial(series).rho(0) == pytest.approx(0.6, abs=0.1)
    m = moments(tuple(range(1, 11)), tuple(1 if order[r] == "AB" else -1 for r in range(1, 11)), 0.0)
    assert m.tr_ms == pytest.approx(8) and m.df == pytest.approx(8) and m.widen == pytest.approx(1)


# --------------------------------------------------------------------------- adaptive stopping


def test_an_adaptive_stop_waits_for_calls_the_campaign_step_keeps():
    plan = Plan.adaptive(12)
    ys = [math.log(1.10) + d for d in (0.004, -0.003, 0.002, -0.004)]
    data = {"op": {"s": {r: (math.exp(y), 1.0) for r, y in enumerate(ys, start=1)}}}
    op = judge_campaign(data, ORDER, plan, rounds_done={"op": 4}).operators[0]
    assert op.shapes[0].test.verdict == FASTER
    assert adaptive_stop(op, plan)[0]  # alone, the call is kept
    stop, why = adaptive_stop(op, plan, campaign_operators=500)
    assert not stop and "could still be withdrawn" in why


def test_stopped_operators_keep_their_calls_after_the_campaign_step():
    # every shape at +15%: operators can stop before the budget once their calls are safe
    got = campaign_power(Noise(name="1%"), Plan.adaptive(12),
                         Scenario(ops=40, affected=1.0, affected_shapes=10, effect=15.0), 1, 15,
                         adaptive=True)
    print(f"\n[40 x 10 adaptive <= 12, +15%] {got}")
    assert got["stopped_early"] > 10 and got["lost"] == 0
    assert got["called"] >= 0.9 * got["true_shapes"] and got["mean_rounds"] < 12


def test_verdicts_go_the_right_way_at_campaign_scale():
    got = campaign_power(Noise(name="1%"), DEFAULT, Scenario(ops=50, effect=-3.0), 2, 16)
    assert got["called"] >= 0.6 * got["true_shapes"] and got["false_calls"] == 0
