"""Campaign-scale statistics: pooled variances, run-order support, serial correlation,
stopping that the campaign step keeps. Each bound of docs/statistics.md's campaign
tables, on fewer seeded campaigns than benchmarks/stats_error_rates.py draws.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest
from zl_core.stats import FASTER, INCONCLUSIVE, Plan, adaptive_stop, judge_campaign, round_order
from zl_core.stats.pooling import Pool, Sample, noise_class
from zl_core.stats.serial import Residuals, evidence, lam_at, match_rho, models, moments
from zl_core.stats.shared import shared
from zl_core.stats.simulate import Noise, operator_rounds
from zl_core.stats.simulate_campaigns import Scenario, campaign_power

ORDER = round_order("counterbalanced", range(1, 41))
DEFAULT = Plan.fixed(8)


GAUSS = Noise(name="g")


def _campaign(rng, n_ops, effects, rounds, noise=GAUSS):
    return {f"op{j}": operator_rounds(rng, effects(j), rounds, noise) for j in range(n_ops)}


# --------------------------------------------------------------------------- the Done-when bounds


@pytest.mark.slow
def test_power_after_the_campaign_step_at_the_default_rounds():
    got = campaign_power(Noise(name="1%"), DEFAULT, Scenario(), 2, 1)
    print(f"\n[200 x 10, +3% at 1%, fixed 8] {got}")
    assert got["called"] >= 0.6 * got["true_shapes"] and got["fdp"] <= 0.05
    quiet = campaign_power(Noise(name="0.2%", side_pct=0.2), DEFAULT, Scenario(effect=1.5), 1, 2)
    print(f"[200 x 10, +1.5% at 0.2%, fixed 8] {quiet}")
    assert quiet["called"] >= 0.7 * quiet["true_shapes"] and quiet["fdp"] <= 0.05


def test_the_false_discovery_step_no_longer_erases_power_at_6_rounds():
    # the audit's campaign: 0.2% of the true shapes survived the step at 6 rounds under
    # rules 1; docs/statistics.md's rounds table shows rules 3 at 6 rounds
    got = campaign_power(Noise(name="1%"), Plan.fixed(6), Scenario(), 1, 3)
    assert got["called"] >= 0.15 * got["true_shapes"]


@pytest.mark.slow
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


def _samples(rng, op, s2s, n=8):
    """Samples of one operator's shapes with independent residuals over n rounds."""
    out = []
    for j, s2 in enumerate(s2s):
        e = tuple(rng.gauss(0, 1) for _ in range(n))
        out.append(Sample(op=op, key=j, cls=0, s2=s2, df=n - 2, rounds=tuple(range(1, n + 1)), residuals=e))
    return out


def test_a_shape_borrows_from_its_own_operators_other_shapes():
    rng = random.Random(11)
    lone = _campaign(rng, 1, lambda j: [0.0] * 10, 6)
    alone = judge_campaign(lone, ORDER, Plan.fixed(6)).operators[0].shapes[0]
    assert alone.test.variance == "operator" and alone.test.df > 4
    # a one-shape operator has no siblings: its own rounds, however many operators beside it
    one = _campaign(rng, 30, lambda j: [0.0] * (1 if j == 0 else 10), 6)
    single = judge_campaign(one, ORDER, Plan.fixed(6)).operators[0].shapes[0]
    assert single.test.variance == "own" and single.test.df == 4


def test_a_noisier_or_quieter_operator_keeps_its_own_level():
    rng = random.Random(21)
    for factor in (5.0, 0.2):
        data = _campaign(rng, 30, lambda j: [0.0] * 10, 8)
        data["odd"] = operator_rounds(rng, [0.0] * 10, 8, Noise(name="g", side_pct=factor))
        odd = judge_campaign(data, ORDER, DEFAULT).operator("odd")
        own = sorted(s.test.own_sd_pct for s in odd.shapes)
        modelled = sorted(s.test.sd_pct for s in odd.shapes)
        # the modelled spread sits among the operator's own, not at its 29 neighbours' level
        assert own[0] * 0.7 <= modelled[len(modelled) // 2] <= own[-1] / 0.7


def test_noise_classes_are_latency_decades_centred_on_powers_of_ten():
    assert noise_class(1.0) == 0 and noise_class(0.99) == 0 and noise_class(0.5) == 0
    assert noise_class(0.02) == -2 and noise_class(0.0035) == -2 and noise_class(4.0) == 1


def test_a_shape_whose_spread_is_far_above_its_siblings_is_not_pooled():
    rng = random.Random(3)
    samples = _samples(rng, "op", [1e-4 * (1 + 0.1 * (j % 3)) for j in range(9)] + [5e-3])
    pool = Pool(samples, mean_class="mean")
    loud = pool.moderate(samples[-1])
    assert loud.df == 6 and loud.var == 5e-3 and "judged on its own rounds" in loud.note
    usual = pool.moderate(samples[3])
    assert usual.df > 6 and 1e-4 < usual.var < 1.5e-4


def test_heterogeneous_shapes_of_an_operator_pool_less():
    rng = random.Random(3)
    even = Pool(_samples(rng, "op", [1e-4] * 10), mean_class="mean")
    spread = Pool(_samples(rng, "op", [1e-4 * math.exp(rng.gauss(0, 1.5)) for _ in range(10)]),
                  mean_class="mean")
    probe = _samples(rng, "op", [1e-4] * 10)[0]
    assert even.prior(probe, alone=True)[1] > 3 * spread.prior(probe, alone=True)[1]


def test_shapes_whose_rounds_move_together_borrow_little_from_each_other():
    rng = random.Random(4)
    common = [rng.gauss(0, 1) for _ in range(8)]
    shared_ = [Sample(op="op", key=j, cls=0, s2=1e-4, df=6, rounds=tuple(range(1, 9)),
                      residuals=tuple(c + 0.05 * rng.gauss(0, 1) for c in common)) for j in range(10)]
    apart = _samples(rng, "op", [1e-4] * 10)
    d_shared = Pool(shared_, mean_class="mean").moderate(shared_[0], alone=True).df
    d_apart = Pool(apart, mean_class="mean").moderate(apart[0], alone=True).df
    assert d_shared < 8 and d_apart > 20


def test_a_disturbed_operator_among_quiet_ones_is_not_called():
    # 40 quiet operators, and one whose round-2 side-B process was 20% slow on every shape
    rng = random.Random(12)
    data = _campaign(rng, 40, lambda j: [0.0] * 5, 4)
    hit = operator_rounds(rng, [0.0] * 5, 4, Noise(name="g"))
    data["hit"] = {k: {r: (a, b * 1.2 if r == 2 else b) for r, (a, b) in v.items()} for k, v in hit.items()}
    op = judge_campaign(data, ORDER, Plan.fixed(4)).operator("hit")
    assert all(s.test.verdict == INCONCLUSIVE for s in op.shapes)


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
    noise = Noise(name="state", state_pct=2.0, state_rho=0.8)
    data = _campaign(rng, 20, lambda j: [1.0] * 10, 10, noise)
    v = judge_campaign(data, ORDER, Plan.fixed(10))
    widened = [o.shapes[0] for o in v.operators if o.shapes[0].test.serial_factor > 2]
    assert len(widened) >= 15 and any("serially correlated" in n for n in widened[0].notes)
    quiet = judge_campaign(_campaign(rng, 20, lambda j: [1.0] * 10, 10), ORDER, Plan.fixed(10))
    assert sum(o.shapes[0].test.serial_factor > 1.0 for o in quiet.operators) <= 3


def _ar_residuals(rng, rho, lam, shapes, n=10):
    order = round_order("counterbalanced", range(1, n + 1))
    orders = tuple(1 if order[r] == "AB" else -1 for r in range(1, n + 1))
    x, state = rng.gauss(0, 1), []
    for _r in range(n):
        state.append(x)
        x = rho * x + math.sqrt(1 - rho * rho) * rng.gauss(0, 1)
    out = []
    for _ in range(shapes):
        y = [math.sqrt(lam) * s + math.sqrt(1 - lam) * rng.gauss(0, 1) for s in state]
        means = {o: sum(v for v, oo in zip(y, orders, strict=True) if oo == o) / orders.count(o)
                 for o in (1, -1)}
        out.append(Residuals(rounds=tuple(range(1, n + 1)), orders=orders,
                             e=tuple(v - means[o] for v, o in zip(y, orders, strict=True))))
    return out


def test_serial_fit_recovers_rho_and_its_moments_are_exact_at_zero():
    rng = random.Random(14)
    evs = []
    for _ in range(200):
        series = _ar_residuals(rng, 0.6, 0.5, 8)
        measured = shared([(s.rounds, s.e) for s in series])
        evs.append(evidence(series, measured.r, measured.r2))
    assert match_rho(evs) == pytest.approx(0.6, abs=0.12)
    assert statistics.median(lam_at(e, 0.6) for e in evs) == pytest.approx(0.5, abs=0.15)
    order = round_order("counterbalanced", range(1, 11))
    m = moments(tuple(range(1, 11)), tuple(1 if order[r] == "AB" else -1 for r in range(1, 11)), 0.0)
    assert m.tr_ms == pytest.approx(8) and m.df == pytest.approx(8) and m.widen == pytest.approx(1)


def test_one_operators_serial_state_is_found_in_its_own_rounds():
    rng = random.Random(15)
    found = 0
    for _ in range(20):
        series = _ar_residuals(rng, 0.9, 0.8, 10, n=20)
        measured = shared([(s.rounds, s.e) for s in series])
        fitted = models({"op": (evidence(series, measured.r, measured.r2), None)})["op"]
        found += fitted.source == "operator" and fitted.rho > 0.5
    assert found >= 15


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


def test_an_operator_clearing_the_bonferroni_bound_stops_on_calls_the_report_keeps():
    """Rules 6: once an operator's family p-value alone is at most q / M, the calls its own
    step keeps alone are kept by the report among any M - 1 operators, so the loop stops on
    them; rules 2-5 waited for each call's p-value to reach q / (M m)."""
    plan, m_ops = Plan.adaptive(12), 50
    rng = random.Random(3)

    def shape(effect, sd):
        return {r: (math.exp(math.log1p(effect / 100) + rng.gauss(0, sd / 100)), 1.0) for r in range(1, 9)}

    tracked = {"big": shape(10, 0.2), "mid": shape(1.5, 0.3)} | {f"z{i}": shape(0, 0.05) for i in range(8)}
    op = judge_campaign({"op": tracked}, ORDER, plan, rounds_done={"op": 8}).operators[0]
    mid = op.shapes[1]
    members = len(op.shapes) + 1
    assert mid.verdict == FASTER and mid.test.p_value > plan.fdr_level / (m_ops * members)
    assert op.family_p <= plan.fdr_level / m_ops
    assert adaptive_stop(op, plan, campaign_operators=m_ops)[0]
    for factor in (0.5, 2.0):
        data = {"op": tracked} | {f"n{j}": operator_rounds(rng, [0.0] * 10, 8, Noise(name="g"), [factor] * 10)
                                  for j in range(m_ops - 1)}
        report = judge_campaign(data, ORDER, plan, rounds_done=dict.fromkeys(data, 8)).operator("op")
        assert [s.verdict for s in report.shapes] == [s.verdict for s in op.shapes], factor


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
