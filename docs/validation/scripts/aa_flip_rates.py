"""False calls at the threshold, from a real A/A campaign's noise (rounds' sides swapped).

    python3 docs/validation/scripts/aa_flip_rates.py report.json [--shift PCT]

An A/A campaign's rounds are draws of the card's real noise: both sides ran the same
code. Swapping the labels A and B of a round (for every shape of the campaign at once,
so what the shapes of a process share stays shared) gives another draw of the same
noise: the round's delta changes sign and so does its run order (the side that ran
first is now called B), so a run-order effect keeps its sign. The 2^rounds patterns of
swaps are each judged by the rules of this checkout (``zl_core.stats.judge_campaign``),
once as measured (the null: every call is false) and once with side B made ``--shift``
percent faster on every shape (default 1: at the threshold, where a FASTER call is
false and the per-shape test allows 2.5%). Printed: per pattern set, the shapes' own
calls by direction, the calls after the campaign step, and the patterns in which any
operator was called. The patterns are not independent (they share the same rounds), so
this is a check of calibration on real noise, not a precise rate.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter
from pathlib import Path

from zl_core.stats import Plan, judge_campaign


def load(report: Path):
    model = json.loads(report.read_text(encoding="utf-8"))
    summary = model["summary"]
    orders = {int(k.lstrip("r")): v for k, v in summary["round_orders"].items()}
    latencies: dict[str, dict] = {}
    for row in model["rows"]:
        if not row.get("counted", True) or row.get("timer") != "graph":
            continue
        key = (row["dtype"], row["size_detail"], row.get("occurrence", 0))
        latencies.setdefault(row["op"], {})[key] = {
            int(r.lstrip("r")): (a, b) for r, a, b in zip(row["rounds"], row["a_ms"], row["b_ms"])}
    return latencies, orders, summary["plan"]


def swapped(latencies, orders, flips: set[int], shift_pct: float):
    factor = 1.0 / (1.0 + shift_pct / 100.0)  # delta = (A / B - 1): B faster by shift_pct
    data = {op: {key: {r: ((b, a) if r in flips else (a, b)) for r, (a, b) in by_round.items()}
                 for key, by_round in shapes.items()} for op, shapes in latencies.items()}
    data = {op: {key: {r: (a, b * factor) for r, (a, b) in by_round.items()}
                 for key, by_round in shapes.items()} for op, shapes in data.items()}
    order = {r: ({"AB": "BA", "BA": "AB"}[o] if r in flips else o) for r, o in orders.items()}
    return data, order


def main() -> None:
    parser = argparse.ArgumentParser(prog="aa_flip_rates.py")
    parser.add_argument("report", type=Path)
    parser.add_argument("--shift", type=float, default=1.0, help="side B faster by PCT (default 1)")
    args = parser.parse_args()
    latencies, orders, plan_json = load(args.report)
    plan = Plan.fixed(plan_json["max_rounds"], threshold_pct=plan_json["threshold_pct"])
    rounds = sorted(orders)
    for shift in (0.0, args.shift):
        own, step, patterns_called, shapes = Counter(), Counter(), 0, 0
        by_shape: Counter = Counter()
        for k in range(len(rounds) + 1):
            for flips in itertools.combinations(rounds, k):
                data, order = swapped(latencies, orders, set(flips), shift)
                verdict = judge_campaign(data, order, plan)
                patterns_called += any(o.verdict in ("FASTER", "SLOWER", "MIXED") for o in verdict.operators)
                for o in verdict.operators:
                    for s in o.shapes:
                        shapes += 1
                        own[s.test.verdict] += 1
                        by_shape[(o.op, s.key[1])] += s.test.verdict in ("FASTER", "SLOWER")
                        step[s.verdict] += 1
        n = 2 ** len(rounds)
        print(f"side B faster by {shift:g}%: {n} patterns x {shapes // n} shapes")
        for label, counts in (("own test", own), ("after the campaign step", step)):
            print(f"  {label}: FASTER {counts['FASTER']} ({100 * counts['FASTER'] / shapes:.2f}%), "
                  f"SLOWER {counts['SLOWER']} ({100 * counts['SLOWER'] / shapes:.2f}%), "
                  f"NO_CHANGE {counts['NO_CHANGE']}, INCONCLUSIVE {counts['INCONCLUSIVE']}")
        print(f"  patterns with any operator called: {patterns_called} of {n}")
        for (op, size), calls in sorted(by_shape.items(), key=lambda kv: -kv[1]):
            if calls:
                print(f"    {op} {size}: {calls} of {n} patterns called by its own test")


if __name__ == "__main__":
    main()
