"""Error rates and power of zl's A/B verdicts, by seeded simulation.

    python benchmarks/stats_error_rates.py              # the figures in docs/statistics.md
    python benchmarks/stats_error_rates.py --scale 0.1  # a quick look (10x fewer trials)

The same functions run small in tests/test_stats_simulations.py and
tests/test_stats_campaigns.py. Output: Markdown tables, pasted into docs/statistics.md
with the command that made them. ``--only campaign`` prints the campaign-scale tables
alone, ``--only noise`` the tables of noise that differs between operators, shapes and
sides (but serial states), ``--only null`` the null campaigns of 100 operators, ``--only spending`` the
spending shares, ``--only power`` the 200-operator power rows and the rounds table,
``--only serial`` the noise tables' last two (serial states, one slow cell), ``--only
company`` an operator alone and in company and the campaign steps compared, ``--only
adaptive`` the adaptive tables, ``--only errors`` the power table and the errors at
campaign scale, ``--only stress`` shapes at the threshold beside a large effect.
"""

from __future__ import annotations

import argparse
import time

from zl_core.stats import ALTERNATING, COUNTERBALANCED, FASTER, NO_CHANGE, SLOWER, Plan
from zl_core.stats import simulate_company as sc
from zl_core.stats import simulate_noise as sn
from zl_core.stats.simulate import (
    MODELS,
    Noise,
    campaign_any_false,
    mixed_noise,
    power_by_rounds,
    shape_rates,
)
from zl_core.stats.simulate_campaigns import Scenario, campaign_power

#: The rounds ``zl ab`` runs when none are named, and the fewest it accepts.
DEFAULT_ROUNDS = 8
MIN_ROUNDS = 4


def pct(x: int, n: int) -> str:
    return f"{100.0 * x / n:.2f}%"


def error_table(trials: int) -> None:
    print("### No effect (1% per side, threshold 1%)\n")
    print(f"{trials} one-shape campaigns per cell; adaptive: looks 4, 6, ..., 20.\n")
    print("| noise model | fixed 6 | fixed 10 | adaptive <= 20 |")
    print("|---|---|---|---|")
    for noise in MODELS:
        cells = []
        for plan, adaptive in ((Plan.fixed(6), False), (Plan.fixed(10), False),
                               (Plan.adaptive(20), True)):
            null = shape_rates(noise, 0.0, plan, trials, 11, adaptive=adaptive)["counts"]
            cells.append(pct(null[FASTER] + null[SLOWER], trials))
        print(f"| {noise.name} | " + " | ".join(cells) + " |")
    print()


def order_table(trials: int) -> None:
    print("### Round order: an effect exactly at the threshold, alternating against counterbalanced\n")
    print(f"{trials} one-shape campaigns per cell, 1% per side, threshold 1%: the share called "
          "beyond the threshold (FASTER at +1%, SLOWER at -1%; 2.5% allowed per side).\n")
    print("| noise model | campaign | alternating +1% | alternating -1% "
          "| counterbalanced +1% | counterbalanced -1% |")
    print("|---|---|---|---|---|---|")
    for noise in MODELS:
        for label, make, adaptive in (("fixed 6", lambda o: Plan.fixed(6, round_order=o), False),
                                      ("fixed 10", lambda o: Plan.fixed(10, round_order=o), False),
                                      ("adaptive <= 20", lambda o: Plan.adaptive(20, round_order=o), True)):
            cells = []
            for order in (ALTERNATING, COUNTERBALANCED):
                up = shape_rates(noise, 1.0, make(order), trials, 52, adaptive=adaptive)["counts"]
                down = shape_rates(noise, -1.0, make(order), trials, 53, adaptive=adaptive)["counts"]
                cells += [pct(up[FASTER], trials), pct(down[SLOWER], trials)]
            print(f"| {noise.name} | {label} | " + " | ".join(cells) + " |")
    print()


def power_table(trials: int) -> None:
    gauss = MODELS[0]
    print("### Power: +3% true effect, 1% per side (threshold 1%)\n")
    print("| campaign | FASTER | SLOWER (wrong way) | NO_CHANGE | INCONCLUSIVE | mean rounds |")
    print("|---|---|---|---|---|---|")
    for label, plan, adaptive in (("fixed 6", Plan.fixed(6), False),
                                  ("fixed 10", Plan.fixed(10), False),
                                  ("adaptive <= 12", Plan.adaptive(12), True),
                                  ("adaptive <= 20", Plan.adaptive(20), True)):
        got = shape_rates(gauss, 3.0, plan, trials, 21, adaptive=adaptive)
        c = got["counts"]
        print(f"| {label} | {pct(c[FASTER], trials)} | {c[SLOWER]} | {c[NO_CHANGE]} | "
              f"{c['INCONCLUSIVE']} | {got['mean_rounds']:.1f} |")
        if label == "adaptive <= 20":
            cum, line = 0, []
            for r, k in got["called_by_round"].items():
                cum += k
                line.append(f"{r}: {pct(cum, trials)}")
            print(f"\nAdaptive <= 20, share called FASTER by round: {', '.join(line)}.\n")
    print()


def monotone_table(trials: int) -> None:
    noise = Noise(name="3% per side", side_pct=3.0)
    rounds = list(range(6, 31, 2))
    print("### Power grows with rounds: +3% true effect, 3% per side, fixed campaigns\n")
    print(f"{trials} trials; each judged at every length on its first rounds.\n")
    print("| rounds | " + " | ".join(str(n) for n in rounds) + " |")
    print("|---" * (len(rounds) + 1) + "|")
    called = power_by_rounds(noise, 3.0, rounds, trials, 31)
    print("| FASTER | " + " | ".join(pct(called[n], trials) for n in rounds) + " |\n")


def campaign_table(campaigns: int) -> None:
    print("### Null campaigns: 100 operators x 10 shapes\n")
    print(f"{campaigns} campaigns per row; process noise 1% shared by the shapes of a process.\n")
    print("| shapes' true effect | side noise | campaign | campaigns with a false operator call "
          "| false operators | shape calls without the FDR step |")
    print("|---|---|---|---|---|---|")
    shared = Noise(name="process", process_pct=1.0)
    for effect, noise_label, side in ((0.0, "3% .. 0.1% across shapes", mixed_noise(10)),
                                      (1.0, "1% every shape", None)):
        for label, plan, adaptive in (("fixed 6", Plan.fixed(6), False),
                                      ("fixed 10", Plan.fixed(10), False),
                                      ("adaptive <= 20", Plan.adaptive(20), True)):
            got = campaign_any_false(shared, plan, campaigns, 41, effect=effect, side_pct=side,
                                     adaptive=adaptive)
            print(f"| {effect:+g}% | {noise_label} | {label} | {got['any_false']}/{campaigns} | "
                  f"{got['false_operators']} | {got['shape_calls_before_fdr']} |")
    print()


def _power_cells(got: dict) -> list[str]:
    true = max(1, got["true_shapes"])
    return [pct(got["own_called"], true), pct(got["called"], true), f"{100 * got['fdp']:.2f}%",
            f"{got['campaigns_with_false_call']}/{got['campaigns']}"]


def campaign_power_table(draws: int) -> None:
    print(f"### Power after the campaign step: fixed {DEFAULT_ROUNDS} rounds (the default)\n")
    print("Campaigns of N operators x 10 shapes; 10% of the operators have 3 shapes with the "
          "effect, every other shape none. Side noise independent per side, shape and round. "
          f"About {draws} operators are drawn per row (N = 1000: {max(2, draws // 1000)} "
          "campaigns). Power is the share of the true shapes called FASTER; FDP the mean "
          "false-discovery proportion over the campaigns.\n")
    print("| operators | side noise | effect | called by their own test | called after the "
          "campaign step | FDP | campaigns with a false call |")
    print("|---|---|---|---|---|---|---|")
    plan = Plan.fixed(DEFAULT_ROUNDS)
    for noise_pct, effect in ((0.2, 1.5), (0.2, 3.0), (1.0, 3.0), (3.0, 3.0)):
        noise = Noise(name=f"{noise_pct}%", side_pct=noise_pct)
        for ops in (10, 50, 200, 1000):
            got = campaign_power(noise, plan, Scenario(ops=ops, effect=effect),
                                 max(2, draws // ops), 61 + ops)
            print(f"| {ops} | {noise_pct:g}% | +{effect:g}% | " + " | ".join(_power_cells(got)) + " |")
    print()


def power_rules_table(campaigns: int) -> None:
    """The 200-operator rows of the power table, and the same campaigns with a process's
    noise shared by its shapes (which the intervals of rules 5 read as a possible slow state)."""
    print(f"### Power after the campaign step, 200 x 10, fixed {DEFAULT_ROUNDS} rounds\n")
    print(f"{campaigns} campaigns per row (seed 261; the power table's 200-operator rows are its "
          "first campaigns); 10% of the operators have 3 shapes with the effect.\n")
    print("| side noise | effect | called by their own test | called after the campaign step | FDP "
          "| campaigns with a false call |")
    print("|---|---|---|---|---|---|")
    plan = Plan.fixed(DEFAULT_ROUNDS)
    for label, noise, effect in (("1%", Noise(name="1%"), 3.0),
                                 ("0.2%", Noise(name="0.2%", side_pct=0.2), 1.5),
                                 ("0.7% + 0.7% per process, shared by its shapes",
                                  Noise(name="process", side_pct=0.7, process_pct=0.7), 3.0)):
        got = campaign_power(noise, plan, Scenario(effect=effect), campaigns, 261)
        print(f"| {label} | +{effect:g}% | " + " | ".join(_power_cells(got)) + " |")
    print()


def campaign_rounds_table(campaigns: int) -> None:
    print("### Rounds against power after the campaign step: 200 x 10, +3% at 1% noise\n")
    print(f"{campaigns} campaigns per row (10% of the operators with 3 shapes at +3%).\n")
    print("| rounds | called by their own test | called after the campaign step | FDP "
          "| campaigns with a false call |")
    print("|---|---|---|---|---|")
    for n in (MIN_ROUNDS, 6, DEFAULT_ROUNDS, 10, 12):
        got = campaign_power(Noise(name="1%"), Plan.fixed(n), Scenario(), campaigns, 71 + n)
        print(f"| {n} | " + " | ".join(_power_cells(got)) + " |")
    print()


def campaign_error_table(campaigns: int) -> None:
    print("### Errors at campaign scale\n")
    print(f"{campaigns} campaigns per row unless stated. A false call is a call of a shape "
          "with no effect beyond the threshold; per-shape rates are over every such shape of "
          "every campaign.\n")
    print("| case | campaign | rounds | shapes called by their own test | shapes called after "
          "the campaign step | campaigns with a false call |")
    print("|---|---|---|---|---|---|")
    no_effect = Scenario(affected=0.0, effect=0.0)
    at_threshold = Scenario(ops=20, affected=0.0, null_effect=1.0)
    one_order = Scenario(ops=50, affected=0.0, keep_rounds=lambda r: r % 4 in (0, 1))
    rows = [
        ("no effect (global null), 1% noise", "200 x 10", DEFAULT_ROUNDS, Noise(name="g"), no_effect, campaigns),
        ("every shape at the threshold (+1%), 1% noise", "20 x 10", DEFAULT_ROUNDS, Noise(name="g"),
         at_threshold, 5 * campaigns),
        ("one 20% slow cell in every operator", "200 x 10", MIN_ROUNDS,
         Noise(name="slow", slow_cell_pct=20.0), no_effect, campaigns),
        ("one 20% slow cell in 1 operator of 10", "200 x 10", MIN_ROUNDS,
         Noise(name="slow", slow_cell_pct=20.0, slow_cell_ops=0.1), no_effect, campaigns),
        ("one 10% slow cell in every operator, 0.1% noise", "200 x 10", MIN_ROUNDS,
         Noise(name="slow", side_pct=0.1, slow_cell_pct=10.0), no_effect, campaigns),
        ("every shape seen with A first only, 2% first-process penalty", "50 x 10", 12,
         Noise(name="first", first_pct=2.0), one_order, 4 * campaigns),
    ]
    for rho in (0.8,):
        for n in (6, 10, 20):
            rows.append((f"AR(1) rho {rho} per side, at the threshold (+1%)", "20 x 10", n,
                         Noise(name="ar", ar_rho=rho), at_threshold, 5 * campaigns))
    for label, size, rounds, noise, scenario, count in rows:
        got = campaign_power(noise, Plan.fixed(rounds), scenario, count, 81 + rounds)
        false = got["shapes"] - got["true_shapes"]
        print(f"| {label} | {size} | {rounds} | {pct(got['false_own'], false)} | "
              f"{pct(got['false_calls'], false)} | {got['campaigns_with_false_call']}/{count} |")
    print()


def adaptive_table(trials: int, campaigns: int) -> None:
    print("### Adaptive rounds: spending and stopping\n")
    print(f"One-shape campaigns, +3% at 3% per side ({trials} trials), fixed against adaptive "
          "(looks 4, 6, ..., 20; half the error budget at the last look, the rest equally):\n")
    print("| campaign | FASTER | mean rounds |")
    print("|---|---|---|")
    noise = Noise(name="3%", side_pct=3.0)
    for label, plan, adaptive in (("fixed 20", Plan.fixed(20), False),
                                  ("adaptive <= 20", Plan.adaptive(20), True)):
        got = shape_rates(noise, 3.0, plan, trials, 91, adaptive=adaptive)
        print(f"| {label} | {pct(got['counts'][FASTER], trials)} | {got['mean_rounds']:.1f} |")
    print(f"\nCampaigns of 200 x 10 (10% of the operators with 3 shapes affected), {campaigns} "
          "campaigns per row (seed 93 in every row): adaptive <= 12 against "
          "fixed 8 and against fixed campaigns of about its mean rounds; and the operators the "
          "loop stopped before its budget with a call, and how many of them the report (the "
          "campaign step) then took calls from.\n")
    print("| noise, effect | campaign | called after the campaign step | FDP | mean rounds "
          "| stopped early with a call | lost a call | lost every call |")
    print("|---|---|---|---|---|---|---|---|")
    for sd, effect in ((1.0, 3.0), (0.2, 1.5)):
        noise = Noise(name=f"{sd}%", side_pct=sd)
        adaptive = campaign_power(noise, Plan.adaptive(12), Scenario(effect=effect), campaigns, 93, adaptive=True)
        mean = adaptive["mean_rounds"]
        near = sorted({max(MIN_ROUNDS, 2 * int(mean // 2)), min(12, 2 * -int(-mean // 2)), DEFAULT_ROUNDS})
        for label, got in [(f"fixed {n}", campaign_power(noise, Plan.fixed(n), Scenario(effect=effect), campaigns,
                                                         93)) for n in near] + [("adaptive <= 12", adaptive)]:
            print(f"| {sd:g}%, +{effect:g}% | {label} | {pct(got['called'], got['true_shapes'])} | "
                  f"{100 * got['fdp']:.2f}% | {got['mean_rounds']:.1f} | {got['stopped_early']} | "
                  f"{got['lost']} | {got['lost_all']} |")
    print()


def spending_table(trials: int) -> None:
    """The adaptive rule under three ways of sharing the error budget over its looks."""
    from unittest import mock

    from zl_core.stats import sequential

    def equal(looks):
        return tuple(1.0 / len(looks) for _ in looks)

    def by_rounds(looks):
        return tuple(x / sum(looks) for x in looks)

    print("### Sharing the error budget over the looks: adaptive <= 20 rounds\n")
    print(f"One-shape campaigns, {trials} trials per cell (the FASTER share; at the threshold "
          "+1%, 2.5% allowed).\n")
    print("| shares | +3% at 3% noise | mean rounds | +3% at 1% noise | mean rounds "
          "| +1% at 1% noise |")
    print("|---|---|---|---|---|---|")
    for label, rule in (("equal", equal), ("in proportion to the looks' rounds", by_rounds),
                        ("half at the last look (zl's)", sequential.spending)):
        with mock.patch.object(sequential, "spending", rule):
            hard = shape_rates(Noise(name="3%", side_pct=3.0), 3.0, Plan.adaptive(20), trials, 91,
                               adaptive=True)
            easy = shape_rates(MODELS[0], 3.0, Plan.adaptive(20), trials, 21, adaptive=True)
            edge = shape_rates(MODELS[0], 1.0, Plan.adaptive(20), 2 * trials, 12, adaptive=True)
        print(f"| {label} | {pct(hard['counts'][FASTER], trials)} | {hard['mean_rounds']:.1f} | "
              f"{pct(easy['counts'][FASTER], trials)} | {easy['mean_rounds']:.1f} | "
              f"{pct(edge['counts'][FASTER], 2 * trials)} |")
    print()


def _rate(x: int, n: int) -> str:
    return f"{100.0 * x / n:.2f}% ({x}/{n})" if n else "-"


def noise_tables(campaigns: int) -> None:
    """Noise that differs between operators, shapes and sides (docs/statistics.md section 8)."""
    plan = Plan.fixed(DEFAULT_ROUNDS)
    gauss = Noise(name="g")
    print(f"### Noise that differs: calls at the threshold (+1%), fixed {DEFAULT_ROUNDS} rounds\n")
    print(f"{campaigns} campaigns of 20 operators x 10 shapes per row, 1% per side unless stated; "
          "every shape at +1%, so every call is false: FASTER (beyond the threshold, 2.5% "
          "allowed per shape's own test) or SLOWER. Counted over the tracked shapes only.\n")
    print("| case | k | FASTER by their own test | SLOWER by their own test | any call after the "
          "campaign step |")
    print("|---|---|---|---|---|")
    rows = [("one operator k x noisier than the other 19", k, sn.noisier_operator(k))
            for k in (1.0, 1.5, 2.0, 3.0, 5.0, 10.0)]
    rows += [("3 shapes of every operator k x noisier than its other 7 (all 20 tracked)", k,
              sn.noisier_shapes(k, tracked_ops=20)) for k in (1.5, 2.0, 3.0, 10.0)]
    rows += [("1 shape of every operator k x noisier than its other 9 (all 20 tracked)", k,
              sn.noisier_shapes(k, noisy=1, tracked_ops=20)) for k in (2.0, 3.0)]
    rows += [("side B k x noisier than side A, among 19 A/A operators", k, sn.side_b_noisier(k))
             for k in (2.0, 5.0)]
    for i, (label, k, build) in enumerate(rows):
        got = sn.rates(build, gauss, plan, campaigns, 100 + i)
        print(f"| {label} | {k:g} | {_rate(got['own_FASTER'], got['shapes'])} | "
              f"{_rate(got['own_SLOWER'], got['shapes'])} | {_rate(got['calls'], got['shapes'])} |")
    print()

    print("### Global null: one operator per latency class k x noisier\n")
    big = max(4, campaigns // 5)
    print(f"{big} campaigns of 200 operators x 10 shapes, 50 in each of four latency classes "
          "(10 us at 1%, 100 us at 0.5%, 1 ms at 0.2%, 10 ms at 0.1% per side), no effect "
          "anywhere; one operator of each class k times noisier (at least 95% of campaigns "
          "must call nothing).\n")
    print("| k | campaigns that call nothing | shapes called by their own test (either way) |")
    print("|---|---|---|")
    for k in (1.0, 5.0, 10.0):
        got = sn.rates(sn.global_null(k), gauss, plan, big, 120 + int(k))
        print(f"| {k:g} | {_rate(big - got['campaigns_with_call'], big)} | "
              f"{_rate(got['own_calls'], got['shapes'])} |")
    print()



STEP_NAMES = {"bb": "rules 5 (Benjamini-Bogomolov)", "gate": "Bonferroni gate, q/M inside",
              "storey": "adaptive (Storey)", "weighted": "weighted by operator noise",
              "kept": "rules 6 (alone where Simes <= q/M)"}


def company_tables(trials: int, campaigns: int) -> None:
    """The same tracked operators judged alone and among 198 neighbours, paired; and the
    campaign steps compared on the same p-values (docs/statistics.md, "Company")."""
    got = sc.company_pairs(trials, 140)
    print("### Company: the same operator alone and among 198 neighbours (paired)\n")
    print(f"{trials} trials. Each trial draws two tracked operators once (10 shapes, 1% per "
          "side): one with 3 shapes at +3%, one with every shape at +2%; judges each alone and in "
          "200-operator campaigns of both and 198 neighbours whose noise is the factor times "
          "theirs (the same draws scaled), 10% of the neighbours with 3 shapes at +3%. "
          "Shapes called right are over the true shapes of every trial; lost and gained "
          "count true shapes called alone and not in company, or the reverse; false calls are "
          "over the other shapes. The Bonferroni floor: trials whose operator alone has a family "
          "p-value at most q/M (5%/200; in the rows alone, 5%).\n")
    print("| tracked operator | neighbours | step | own tests: called right | after the step: "
          "called right | operator called right | lost / gained against alone (own test lost) "
          "| false calls | trials at the floor: true shapes the step lost |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, _, _ in sc.TRACKED:
        for factor in (None, 0.5, 1.0, 2.0):
            for name in (("kept",) if factor is None else ("bb", "kept")):
                c = got[(label, factor, name)]
                who = "none (alone)" if factor is None else f"{factor:g} x its noise"
                step = "any" if factor is None else STEP_NAMES[name]
                print(f"| {label} | {who} | {step} | {_rate(c['own'], c['true'])} | "
                      f"{_rate(c['right'], c['true'])} | {_rate(c['op_right'], trials)} | "
                      f"{c['lost']} / {c['gained']} ({c['own_lost']}) | {_rate(c['false'], c['nulls'])} | "
                      f"{c['floor']}: {c['below_floor']} |")
    print()

    edge = max(100, 10 * trials)
    called = sc.alone_at_the_edge(edge, 150)
    rate = called / edge
    print(f"Operators with every shape at the threshold (+1%, 10 shapes, 1% per side), each "
          f"judged alone: {_rate(called, edge)} called. Judged as alone in a campaign of 200 "
          f"such operators: {100 * (1 - (1 - rate) ** 200):.1f}% of campaigns would call "
          "something (at most 5% allowed).\n")

    plan = Plan.fixed(DEFAULT_ROUNDS)
    print("### Campaign steps compared on the same p-values\n")
    print(f"The company trials above, and campaigns judged once with each step re-applied to "
          f"their p-values: homogeneous 200 x 10 ({campaigns} campaigns a row, 20 operators "
          f"with 3 shapes at the effect), every shape at the threshold (20 x 10, "
          f"{5 * campaigns} campaigns), and the global null with one operator per latency "
          f"class 5x or 10x noisier (200 x 10, {campaigns} campaigns each). Power is the "
          "share of true shapes called after the step.\n")
    rows = {
        "1%, +3%": sc.judged_campaigns(_homogeneous(1.0, 3.0), plan, campaigns, 261),
        "0.2%, +1.5%": sc.judged_campaigns(_homogeneous(0.2, 1.5), plan, campaigns, 262),
        "at the threshold": sc.judged_campaigns(lambda rng: [([1.0] * 10, [1.0] * 10, 1.0)] * 20, plan,
                                                5 * campaigns, 263),
        "null 5x": sc.judged_campaigns(_global_null(5.0), plan, campaigns, 125),
        "null 10x": sc.judged_campaigns(_global_null(10.0), plan, campaigns, 130),
    }
    rates = {label: sc.step_rates(judged) for label, judged in rows.items()}
    print("| step | 3 shapes at +3%: alone / 0.5x / 1x / 2x neighbours | every shape at +2%, "
          "operator: alone / 2x | power 1%, +3% | power 0.2%, +1.5% | FDP (highest of the two) "
          "| at the threshold: campaigns with a call | global null 5x / 10x: campaigns that call "
          "nothing |")
    print("|---|---|---|---|---|---|---|---|")
    hit, every = sc.TRACKED[0][0], sc.TRACKED[1][0]
    for name in sc.STEPS:
        power = " / ".join(pct(got[(hit, f, name)]['right'], got[(hit, f, name)]['true'])
                           for f in (None, 0.5, 1.0, 2.0))
        op = " / ".join(pct(got[(every, f, name)]['op_right'], trials) for f in (None, 2.0))
        h, q = rates["1%, +3%"][name], rates["0.2%, +1.5%"][name]
        edge = rates["at the threshold"][name]
        null = " / ".join(_rate(r[name]["campaigns"] - r[name]["campaigns_with_call"], r[name]["campaigns"])
                          for r in (rates["null 5x"], rates["null 10x"]))
        print(f"| {STEP_NAMES[name]} | {power} | {op} | {pct(h['right'], h['true'])} | "
              f"{pct(q['right'], q['true'])} | {100 * max(h['fdp'], q['fdp']):.2f}% | "
              f"{edge['campaigns_with_call']}/{edge['campaigns']} | {null} |")
    print()


def stress_table(campaigns: int) -> None:
    """A hard null for the shapes of affected operators: each has one large
    effect, which clears the Bonferroni bound, and nine shapes exactly at the threshold."""
    plan = Plan.fixed(DEFAULT_ROUNDS)

    def ops(rng):
        return [([10.0 if j < 100 and i == 0 else 1.0 for i in range(10)], [1.0] * 10, 1.0) for j in range(200)]
    rates = sc.step_rates(sc.judged_campaigns(ops, plan, campaigns, 271))
    print("### Shapes at the threshold beside a large effect\n")
    print(f"{campaigns} campaigns of 200 operators x 10 shapes at 1% per side: 100 operators with "
          "one shape at +10% and nine at +1% (the threshold: no effect beyond it), 100 with every "
          "shape at +1%. Each step re-applied to the same p-values. False calls are calls of the "
          "+1% shapes; the false share over the campaign's shape calls, and the false share of "
          "each called operator's calls (its mean included) averaged over the called operators "
          "(what the two-stage rule bounds at 5%), both means over the campaigns.\n")
    print("| step | +10% shapes called | false calls | false share of the shape calls | false share "
          "per called operator | campaigns with a false call |")
    print("|---|---|---|---|---|---|")
    for name, r in rates.items():
        print(f"| {STEP_NAMES[name]} | {_rate(r['right'], r['true'])} | {r['false']} | "
              f"{100 * r['fdp']:.2f}% | {100 * r['op_fdp']:.2f}% | {r['campaigns_with_false_call']}/{r['campaigns']} |")
    print()


def _homogeneous(sd: float, effect: float):
    return lambda rng: [([effect if j < 20 and i < 3 else 0.0 for i in range(10)], [sd] * 10, 1.0)
                        for j in range(200)]


def _global_null(k: float):
    def ops(rng):
        out = []
        for base, sd in sn.CLASSES:
            out.append(([0.0] * 10, [sd * k] * 10, base))
            out += [([0.0] * 10, [sd] * 10, base) for _ in range(49)]
        return out
    return ops


def serial_tables(campaigns: int) -> None:
    """A serial state shared by a process's shapes, and one slow cell (section 8)."""
    plan = Plan.fixed(DEFAULT_ROUNDS)
    gauss = Noise(name="g")
    print("### Serial correlation: a side state shared by the shapes of a process\n")
    print(f"{campaigns} campaigns of 20 operators x 10 shapes per row, every shape at +1% (the "
          "share called FASTER by the tracked shapes' own tests; 5% allowed). The shared state: "
          "each side's process carries an AR(1) state (rho 0.8, 0.7% per side) shared by its "
          "shapes, beside 1% of their own (a third of the variance shared). Per shape: each "
          "shape's own noise is an AR(1) of rho 0.8 (rules 2's model).\n")
    print("| serial state | which operators | rounds | FASTER by their own test |")
    print("|---|---|---|---|")
    state = Noise(name="state", state_pct=0.7, state_rho=0.8)
    ar = Noise(name="ar", ar_rho=0.8)
    for rounds in (DEFAULT_ROUNDS, 10, 20):
        for label, who, build, noise in (
                ("shared by the shapes", "all 20", sn.noisier_operator(1.0), state),
                ("shared by the shapes", "1 of 20", sn.lone(state), gauss),
                ("per shape", "1 of 20", sn.lone(ar), gauss)):
            got = sn.rates(build, noise, Plan.fixed(rounds), campaigns, 160 + rounds)
            print(f"| {label} | {who} | {rounds} | {_rate(got['own_FASTER'], got['shapes'])} |")
    print()

    print("### One slow cell\n")
    print(f"{campaigns} campaigns of 20 operators x 10 shapes per row, every shape at +1% (1% per "
          "side); in every operator one process, drawn among its rounds and sides, slower by "
          "the size given on every shape (2.5% allowed).\n")
    print("| slow cell | rounds | FASTER by their own test |")
    print("|---|---|---|")
    for size in (3.0, 5.0, 10.0, 20.0):
        got = sn.rates(sn.noisier_operator(1.0), Noise(name="slow", slow_cell_pct=size), plan,
                       campaigns, 170 + int(size))
        print(f"| {size:g}% | {DEFAULT_ROUNDS} | {_rate(got['own_FASTER'], got['shapes'])} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python benchmarks/stats_error_rates.py")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full trial counts")
    parser.add_argument("--only", choices=("campaign", "shape", "spending", "noise", "null", "power",
                                           "serial", "company", "adaptive", "errors", "stress"),
                        help="print one part only")
    args = parser.parse_args()
    start = time.time()
    scale = args.scale
    if args.only == "null":
        campaign_table(max(10, int(200 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "power":
        power_rules_table(max(2, int(40 * scale)))
        campaign_rounds_table(max(2, int(40 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "serial":
        serial_tables(max(10, int(200 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "adaptive":
        adaptive_table(max(100, int(4000 * scale)), max(1, int(10 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "errors":
        campaign_power_table(max(400, int(8000 * scale)))
        campaign_error_table(max(2, int(40 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "stress":
        stress_table(max(4, int(20 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "company":
        company_tables(max(4, int(100 * scale)), max(4, int(20 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "noise":
        noise_tables(max(10, int(200 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only == "spending":
        spending_table(max(100, int(2000 * scale)))
        print(f"({time.time() - start:.0f} s)")
        return
    if args.only != "campaign":
        error_table(max(100, int(10000 * scale)))
        order_table(max(100, int(40000 * scale)))
        power_table(max(100, int(10000 * scale)))
        monotone_table(max(100, int(4000 * scale)))
        campaign_table(max(10, int(200 * scale)))
    if args.only != "shape":
        campaign_power_table(max(400, int(8000 * scale)))
        campaign_rounds_table(max(2, int(40 * scale)))
        campaign_error_table(max(2, int(40 * scale)))
        adaptive_table(max(100, int(4000 * scale)), max(1, int(10 * scale)))
        noise_tables(max(10, int(200 * scale)))
        company_tables(max(4, int(100 * scale)), max(4, int(20 * scale)))
        stress_table(max(4, int(20 * scale)))
        serial_tables(max(10, int(200 * scale)))
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
