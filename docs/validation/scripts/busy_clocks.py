"""Busy SM clocks per operator of a campaign, from its telemetry.tsv and status.tsv.

    python docs/validation/scripts/busy_clocks.py CAMPAIGN [--min-util 50]

For every operator: the SM clock samples taken inside its cells' windows while the
device was busy (utilisation above --min-util), as count, median, min and max (MHz).
Used in docs/validation/2026-12-03-h200.md to show that GEMM cells run at a lower,
power-limited clock than pointwise ones.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from datetime import datetime, timezone
from pathlib import Path


def _stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(prog="busy_clocks.py")
    parser.add_argument("campaign", type=Path)
    parser.add_argument("--min-util", type=float, default=50.0)
    args = parser.parse_args()
    with open(args.campaign / "status.tsv", encoding="utf-8") as fh:
        cells = list(csv.DictReader(fh, delimiter="\t"))
    with open(args.campaign / "telemetry.tsv", encoding="utf-8") as fh:
        samples = [(_stamp(s["timestamp"]), float(s["sm_clock_mhz"]))
                   for s in csv.DictReader(fh, delimiter="\t")
                   if s["sm_clock_mhz"] and float(s.get("util_pct") or 0) > args.min_util]
    for op in dict.fromkeys(c["op"] for c in cells):
        clocks = sorted(mhz for c in cells if c["op"] == op
                        for t, mhz in samples if float(c["start"]) <= t <= float(c["end"]))
        if clocks:
            print(f"{op}\t{len(clocks)} samples\tmedian {statistics.median(clocks):.0f} MHz\t"
                  f"{clocks[0]:.0f}-{clocks[-1]:.0f}")
        else:
            print(f"{op}\tno busy samples")


if __name__ == "__main__":
    main()
