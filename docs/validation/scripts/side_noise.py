"""Per-side noise of the graph-timed rows of one or more campaigns, from `zl report --json`.

    zl report CAMPAIGN --json > before.json   (likewise after.json)
    python3 docs/validation/scripts/side_noise.py before.json after.json

Side noise in the report is the range (max - min) / median of one side's latency across
rounds. A range grows with the number of rounds (about 1.7 sd for 3 draws, 2.5 sd for
6), so campaigns of different lengths are compared here on two measures that do not:
- `range3`: the range over the first three rounds only;
- `sd`: the sample standard deviation of log(latency) across all rounds, in %.
Medians are over both sides of every graph-timed shape of at least 20 us (the issue's
target population) and, separately, over all graph-timed shapes.
"""

from __future__ import annotations

import json
import math
import statistics
import sys

MIN_MS = 0.020


def side_figures(values: list[float]) -> tuple[float, float] | None:
    values = [v for v in values if v]
    if len(values) < 3:
        return None
    first = values[:3]
    range3 = (max(first) - min(first)) / statistics.median(first) * 100
    logs = [math.log(v) for v in values]
    return range3, statistics.stdev(logs) * 100


def analyse(path: str) -> None:
    with open(path) as handle:
        model = json.load(handle)
    print(f"== {path}: {model.get('title', '')}")
    print("op\tshape\tmedian_ms\trounds\trange3 A/B %\tsd A/B %\twithin A/B %\tverdict")
    big_r3, big_sd, all_r3, all_sd = [], [], [], []
    # An A/B campaign's A/A controls are left out; in an A/A campaign every row is one.
    aa = all(row.get("control") for row in model["rows"])
    for row in model["rows"]:
        if row["timer"] != "graph" or (row.get("control") and not aa):
            continue
        a, b = side_figures(row["a_ms"]), side_figures(row["b_ms"])
        if a is None or b is None:
            continue
        med = statistics.median([v for v in row["a_ms"] if v])
        within = "/".join("-" if row.get(k) is None else f"{row[k]:.2f}"
                          for k in ("a_within_pct", "b_within_pct"))
        print(f"{row['op']}\t{row['size_detail'][:40]}\t{med:.4f}\t{len(row['a_ms'])}\t"
              f"{a[0]:.2f}/{b[0]:.2f}\t{a[1]:.2f}/{b[1]:.2f}\t{within}\t{row['verdict']}")
        all_r3 += [a[0], b[0]]
        all_sd += [a[1], b[1]]
        if med >= MIN_MS:
            big_r3 += [a[0], b[0]]
            big_sd += [a[1], b[1]]
    for name, r3, sd in (("graph-timed >= 20 us", big_r3, big_sd), ("all graph-timed", all_r3, all_sd)):
        if r3:
            print(f"median over {name} ({len(r3) // 2} shapes): range3 {statistics.median(r3):.2f}%, "
                  f"sd {statistics.median(sd):.2f}%")
    print(f"device time: {model['summary']['device_time']['text']}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: side_noise.py REPORT.json [REPORT.json ...]")
    for report_path in sys.argv[1:]:
        analyse(report_path)
