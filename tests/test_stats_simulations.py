"""Seeded simulations of issue 11's "Done when", small enough for CI.

The same functions run large in benchmarks/stats_error_rates.py, whose output is the
table in docs/statistics.md. Seeds are fixed: a re-run gives the same counts.
Noise: 1% per side (lognormal), threshold 1%, 95%, unless a test says otherwise.
"""

from __future__ import annotations

import pytest
from zl_core.stats import FASTER, SLOWER, Plan
from zl_core.stats.simulate import (
    MODELS,
    Noise,
    campaign_any_false,
    mixed_noise,
    power_by_rounds,
    shape_rates,
)

GAUSS = MODELS[0]


def test_power_at_1pct_noise_by_10_fixed_and_12_adaptive_rounds():
    fixed = shape_rates(GAUSS, 3.0, Plan.fixed(10), 1000, 21)["counts"]
    print(f"\n[+3%, fixed 10] {fixed}")
    assert fixed[FASTER] >= 800 and fixed[SLOWER] == 0
    adaptive = shape_rates(GAUSS, 3.0, Plan.adaptive(12), 300, 22, adaptive=True)
    print(f"[+3%, adaptive <= 12] {adaptive}")
    assert adaptive["counts"][FASTER] >= 0.8 * 300 and adaptive["counts"][SLOWER] == 0
    wrong = shape_rates(GAUSS, -3.0, Plan.fixed(6), 1000, 23)["counts"]
    assert wrong[FASTER] == 0 and wrong[SLOWER] > 500


@pytest.mark.parametrize("noise", MODELS, ids=[m.name for m in MODELS])
def test_no_effect_is_called_at_most_1pct(noise):
    rates = {}
    for label, plan, adaptive, trials in (("fixed 6", Plan.fixed(6), False, 500),
                                          ("fixed 10", Plan.fixed(10), False, 400),
                                          ("adaptive 20", Plan.adaptive(20), True, 200)):
        c = shape_rates(noise, 0.0, plan, trials, 11, adaptive=adaptive)["counts"]
        rates[label] = (c[FASTER] + c[SLOWER]) / trials
    print(f"\n[{noise.name}, no effect] false-call rates {rates}")
    assert all(r <= 0.01 for r in rates.values()), rates


@pytest.mark.slow
@pytest.mark.parametrize("noise", [MODELS[0], MODELS[4]], ids=["Gaussian", "disturbed"])
def test_an_effect_at_the_threshold_is_called_beyond_it_at_most_2_5pct_per_side(noise):
    trials = 800
    for plan, adaptive in ((Plan.fixed(6), False), (Plan.adaptive(20), True)):
        up = shape_rates(noise, 1.0, plan, trials, 12, adaptive=adaptive)["counts"]
        down = shape_rates(noise, -1.0, plan, trials, 13, adaptive=adaptive)["counts"]
        print(f"\n[{noise.name}, at threshold, {plan.looks}] FASTER {up[FASTER]}, SLOWER {down[SLOWER]} of {trials}")
        # 2.5% plus two binomial standard errors of the simulation (the t test is exact
        # at one look; the union bound over looks is conservative)
        limit = trials * (0.025 + 2 * (0.025 * 0.975 / trials) ** 0.5)
        assert up[FASTER] <= limit and down[SLOWER] <= limit
        assert up[SLOWER] == 0 and down[FASTER] == 0


def test_power_at_3pct_noise_grows_with_rounds():
    rounds = [6, 10, 14, 18, 22, 26, 30]
    called = power_by_rounds(Noise(name="3% per side", side_pct=3.0), 3.0, rounds, 300, 31)
    print(f"\n[+3%, 3% per side] FASTER by rounds {called}")
    counts = [called[n] for n in rounds]
    assert counts == sorted(counts) and counts[-1] > 3 * counts[0]


@pytest.mark.slow
def test_null_campaign_of_100_operators_rarely_calls_any():
    shared = Noise(name="process", process_pct=1.0)
    # every shape exactly at the threshold: the hardest null; without the FDR step each
    # campaign would call several shapes (fewer since rules 5, whose intervals read the
    # process noise the shapes share as a possible slow state, and widen)
    at = campaign_any_false(shared, Plan.fixed(6), 4, 41, effect=1.0)
    print(f"\n[100 x 10 at the threshold, fixed 6] {at}")
    assert at["shape_calls_before_fdr"] >= 4 * 5 and at["any_false"] <= 1
    mixed = campaign_any_false(shared, Plan.fixed(6), 2, 42, side_pct=mixed_noise(10))
    print(f"[100 x 10 no effect, noise 3%..0.1%, fixed 6] {mixed}")
    assert mixed["any_false"] == 0
