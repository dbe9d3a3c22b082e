"""Verdicts when noise differs between operators, shapes and sides (rules 3): a noisy
operator never borrows a quiet class's variance, company never takes a decision away,
serial states shared by a process's shapes widen instead of calling. Each bound of
docs/statistics.md's "Noise that differs" tables, on fewer seeded campaigns than
benchmarks/stats_error_rates.py draws.
"""

from __future__ import annotations

import random

import pytest
from zl_core.stats import INCONCLUSIVE, Plan, judge_campaign, round_order
from zl_core.stats import simulate_noise as sn
from zl_core.stats.simulate import Noise, operator_rounds

ORDER = round_order("counterbalanced", range(1, 41))
DEFAULT = Plan.fixed(8)
GAUSS = Noise(name="g")


def _beyond(got: dict) -> int:
    """Own calls beyond the threshold in the effect's direction (every shape at +1%)."""
    return got["own_FASTER"]


@pytest.mark.parametrize("k", [3.0, 10.0])
def test_a_noisier_operator_is_not_called_at_the_threshold_for_its_company(k):
    got = sn.rates(sn.noisier_operator(k), GAUSS, DEFAULT, 30, 1)
    print(f"\n[one operator {k}x noisier, +1%] {got}")
    assert _beyond(got) <= 0.04 * got["shapes"]  # rules 2: 6-10% (2.5% allowed; small count)


def test_a_side_b_noisier_operator_among_aa_controls_is_not_called():
    got = sn.rates(sn.side_b_noisier(2.0), GAUSS, DEFAULT, 30, 2)
    assert _beyond(got) <= 0.04 * got["shapes"]  # rules 2: 8.0%


@pytest.mark.parametrize("k", [5.0, 10.0])
def test_a_global_null_with_one_noisy_operator_per_class_calls_nothing(k):
    got = sn.rates(sn.global_null(k, per_class=25), GAUSS, DEFAULT, 2, 3)
    assert got["campaigns_with_call"] == 0


def test_company_never_takes_a_decision_away():
    """The tracked operator in campaigns of noisier and quieter neighbours: each shape's
    interval lies inside its interval alone, so whatever alone decided stays decided."""
    rng = random.Random(4)
    checked = 0
    for factor in (0.3, 1.0, 3.0):
        for _ in range(3):
            tracked = operator_rounds(rng, [3.0, 1.5, 0.0, 0.0, -2.0, 0.5], 8, GAUSS, [1.0] * 6)
            alone = judge_campaign({"t": tracked}, ORDER, DEFAULT).operator("t")
            data = {"t": tracked}
            data.update({f"n{j}": operator_rounds(rng, [0.0] * 6, 8, GAUSS, [factor] * 6) for j in range(30)})
            within = judge_campaign(data, ORDER, DEFAULT).operator("t")
            for a, c in zip(alone.shapes, within.shapes, strict=True):
                if a.test.serial_factor != c.test.serial_factor:
                    continue  # the campaign's rounds showed a serial state: only that may widen
                checked += 1
                assert a.test.ci_low_pct - 1e-9 <= c.test.ci_low_pct <= c.test.ci_high_pct <= a.test.ci_high_pct + 1e-9
                # An estimate inside the band has a p-value of at least 1/2, which decides at
                # no level; beyond it a narrower interval on as many degrees of freedom gives
                # the smaller p-value.
                assert min(c.test.p_value, 0.5) <= min(a.test.p_value, 0.5) + 1e-12
                if a.test.verdict != INCONCLUSIVE:
                    assert c.test.verdict == a.test.verdict
    assert checked >= 45


def test_an_operator_every_shape_at_2pct_is_faster_alone_and_among_noisier_neighbours():
    for factor in (None, 2.0):
        got = sn.rates(sn.company(factor, effect=2.0, hit=10, ops=100), GAUSS, DEFAULT, 2, 5)
        assert got["op_calls"] == 2, factor  # rules 2: INCONCLUSIVE in 96% among 2x noisier


def test_a_quiet_operator_among_noisier_ones_keeps_its_own_calls():
    rng = random.Random(6)
    kept = 0
    for _ in range(4):
        tracked = operator_rounds(rng, [3.0] * 3 + [0.0] * 7, 8, GAUSS)
        alone = judge_campaign({"t": tracked}, ORDER, DEFAULT).operator("t")
        data = {"t": tracked}
        data.update({f"n{j}": operator_rounds(rng, [0.0] * 10, 8, GAUSS, [2.0] * 10) for j in range(40)})
        within = judge_campaign(data, ORDER, DEFAULT).operator("t")
        own_alone = [s.test.verdict for s in alone.shapes]
        own_within = [s.test.verdict for s in within.shapes]
        assert [v for v in own_alone if v != INCONCLUSIVE] == [
            w for v, w in zip(own_alone, own_within, strict=True) if v != INCONCLUSIVE]
        kept += own_within[:3].count("FASTER")
    assert kept >= 8  # rules 2: a quiet operator among 2x noisier ones lost every call


@pytest.mark.parametrize("rounds", [10, 20])
def test_a_shared_side_state_at_the_threshold_stays_within_5pct(rounds):
    state = Noise(name="state", state_pct=0.7, state_rho=0.8)
    got = sn.rates(sn.noisier_operator(1.0), state, Plan.fixed(rounds), 20, 7)
    print(f"\n[shared AR(1) 0.8 state, {rounds} rounds] {got}")
    assert _beyond(got) <= 0.05 * got["shapes"]


def test_one_operator_with_its_own_serial_rounds_among_clean_ones():
    got = sn.rates(sn.lone(Noise(name="ar", ar_rho=0.8)), GAUSS, Plan.fixed(20), 20, 8)
    assert _beyond(got) <= 0.05 * got["shapes"]


@pytest.mark.parametrize("size", [3.0, 10.0, 20.0])
def test_one_slow_cell_does_not_decide_a_pooled_shape(size):
    got = sn.rates(sn.noisier_operator(1.0), Noise(name="slow", slow_cell_pct=size), DEFAULT, 30, 9)
    assert _beyond(got) <= 0.025 * got["shapes"]  # rules 2: 10-20.5%


def test_the_noise_scenarios_count_what_they_claim():
    got = sn.rates(sn.company(None), GAUSS, DEFAULT, 3, 10)
    assert got["shapes"] == 30 and got["true"] == 9 and got["own_right"] + got["own_wrong"] == got["own_calls"]
    assert got["own_FASTER"] + got["own_SLOWER"] == got["own_calls"]
    shapes = sn.rates(sn.noisier_shapes(3.0), GAUSS, DEFAULT, 2, 11)
    assert shapes["shapes"] == 6  # only the 3 noisy shapes of the first operator
