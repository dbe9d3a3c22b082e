"""Per-shape A/A noise with the run-order effect removed, grouped by latency decade.

    zl report CAMPAIGN --json --out report.json
    python3 docs/validation/scripts/aa_noise_by_class.py report.json [CAMPAIGN]

For each graph-timed shape with at least 3 rounds of both sides: y_r = 100 * ln(A_r / B_r)
(percent) for each round r, o_r = +1 where side A ran first in round r and -1 where B did.
The least-squares fit y = mu + gamma * o leaves residuals whose sd (n - 2 degrees of
freedom) is the shape's noise with the run-order effect removed. Where every round ran
in one order gamma cannot be told from mu: the sd is then about the mean (n - 1 df) and
the row says so. The run order comes from the report's summary.round_orders; given the
campaign folder too, from its status.tsv (which side of each round started first), and
any round where the two disagree is printed.

Each shape is put in the latency decade round(log10(median of side A's latencies in ms));
per decade the table ends with the ratio of the largest to the smallest residual sd.
Stdlib only.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
import sys
from pathlib import Path


def orders_from_status(campaign: Path) -> dict[tuple[str, str], int]:
    """{(op, 'r01'): +1 if A started first, -1 if B did} from the campaign's status.tsv."""
    starts: dict[tuple[str, str], dict[str, float]] = {}
    with open(campaign / "status.tsv", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            rnd = f"r{int(row['round']):02d}"
            starts.setdefault((row["op"], rnd), {})[row["side"]] = float(row["start"])
    return {key: (1 if s["A"] < s["B"] else -1)
            for key, s in starts.items() if "A" in s and "B" in s}


def fit(y: list[float], o: list[int]) -> tuple[float, float | None, float, int]:
    """OLS of y on (1, o): mu, gamma (None when o is constant), residual sd, its df."""
    n = len(y)
    mean_o = sum(o) / n
    sxx = sum((v - mean_o) ** 2 for v in o)
    mean_y = sum(y) / n
    if sxx == 0:
        df = n - 1
        ss = sum((v - mean_y) ** 2 for v in y)
        return mean_y, None, math.sqrt(ss / df) if df > 0 else float("nan"), df
    gamma = sum((oi - mean_o) * (yi - mean_y) for oi, yi in zip(o, y)) / sxx
    mu = mean_y - gamma * mean_o
    df = n - 2
    ss = sum((yi - mu - gamma * oi) ** 2 for oi, yi in zip(o, y))
    return mu, gamma, math.sqrt(ss / df) if df > 0 else float("nan"), df


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    model = json.loads(Path(argv[0]).read_text())
    report_orders = {r: (1 if order == "AB" else -1)
                     for r, order in (model["summary"].get("round_orders") or {}).items()}
    status_orders = orders_from_status(Path(argv[1])) if len(argv) == 2 else {}
    for (op, rnd), o in sorted(status_orders.items()):
        if rnd in report_orders and report_orders[rnd] != o:
            print(f"note: {op} {rnd} ran {'AB' if o > 0 else 'BA'} by status.tsv, "
                  f"report.json's round_orders says {'AB' if report_orders[rnd] > 0 else 'BA'}")

    table = []
    for row in model["rows"]:
        if row.get("timer") != "graph":
            continue
        y, o, a_vals = [], [], []
        for rnd, a, b in zip(row["rounds"], row["a_ms"], row["b_ms"]):
            if not a or not b:
                continue
            order = status_orders.get((row["op"], rnd), report_orders.get(rnd))
            if order is None:
                continue
            y.append(100 * math.log(a / b))
            o.append(order)
            a_vals.append(a)
        if len(y) < 3:
            continue
        mu, gamma, sd, df = fit(y, o)
        med = statistics.median(a_vals)
        shape = row["size_detail"] + (f" #{row['occurrence']}" if row.get("occurrence") else "")
        table.append({"op": row["op"], "shape": shape, "median_ms": med,
                      "decade": round(math.log10(med)), "n": len(y), "df": df,
                      "mu": mu, "gamma": gamma, "sd": sd, "verdict": row.get("verdict", "")})

    table.sort(key=lambda t: (t["decade"], t["median_ms"]))
    print("operator\tshape\tmedian_A_ms\tdecade\trounds\tdf\tmean_pct\torder_pct\tresidual_sd_pct\tverdict")
    for t in table:
        gamma = "-" if t["gamma"] is None else f"{t['gamma']:+.3f}"
        print(f"{t['op']}\t{t['shape']}\t{t['median_ms']:.4f}\t{t['decade']}\t{t['n']}\t{t['df']}\t"
              f"{t['mu']:+.3f}\t{gamma}\t{t['sd']:.3f}\t{t['verdict']}")
    print()
    print("decade\tshapes\tmin_sd_pct\tmax_sd_pct\tmax/min")
    for decade in sorted({t["decade"] for t in table}):
        sds = [t["sd"] for t in table if t["decade"] == decade and not math.isnan(t["sd"])]
        if not sds:
            continue
        lo, hi = min(sds), max(sds)
        ratio = f"{hi / lo:.1f}" if lo > 0 else "inf"
        print(f"1e{decade} ms\t{len(sds)}\t{lo:.3f}\t{hi:.3f}\t{ratio}")
    if any(t["gamma"] is None for t in table):
        print("note: rows with order_pct '-' ran every round in one order: their sd is about the mean (n-1 df)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
