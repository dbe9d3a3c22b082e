"""Error rates and power of zl's A/B verdicts, by seeded simulation.

    python benchmarks/stats_error_rates.py              # the figures in docs/statistics.md
    python benchmarks/stats_error_rates.py --scale 0.1  # a quick look (10x fewer trials)

The same functions run small in tests/test_stats_simulations.py. Output: Markdown
tables, pasted into docs/statistics.md with the command that made them.
"""

from __future__ import annotations

import argparse
import time

from zl_core.stats import ALTERNATING, COUNTERBALANCED, FASTER, NO_CHANGE, SLOWER, Plan
from zl_core.stats.simulate import (
    MODELS,
    Noise,
    campaign_any_false,
    mixed_noise,
    power_by_rounds,
    shape_rates,
)


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


def main() -> None:
    parser = argparse.ArgumentParser(prog="python benchmarks/stats_error_rates.py")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full trial counts")
    args = parser.parse_args()
    start = time.time()
    error_table(max(100, int(10000 * args.scale)))
    order_table(max(100, int(40000 * args.scale)))
    power_table(max(100, int(10000 * args.scale)))
    monotone_table(max(100, int(4000 * args.scale)))
    campaign_table(max(10, int(200 * args.scale)))
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
