"""How much of each cell's wall time the card sat at idle clocks, from a campaign's
status.tsv and telemetry.tsv (one sample a second).

    python3 docs/validation/scripts/cell_idle.py CAMPAIGN_DIR [IDLE_MHZ]

A cell first starts Python and imports torch, Triton and the operator library; until
it touches the card, the card stays at its idle SM clock (345 MHz on the H200). The
seconds of a cell whose samples read at most IDLE_MHZ (default 400) are time the
cell held a lane without using the device: the part a warm interpreter could save.
"""

from __future__ import annotations

import csv
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path


def read_tsv(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def main(campaign: Path, idle_mhz: float) -> None:
    samples = []
    for row in read_tsv(campaign / "telemetry.tsv"):
        stamp = datetime.strptime(row["timestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        samples.append((stamp.timestamp(), float(row["sm_clock_mhz"] or "nan")))
    idle_share, idle_secs, walls = [], [], []
    for cell in read_tsv(campaign / "status.tsv"):
        start, end = float(cell["start"]), float(cell["end"])
        inside = [mhz for t, mhz in samples if start <= t < end]
        if not inside:
            continue
        idle = sum(1 for mhz in inside if mhz <= idle_mhz)
        idle_secs.append(idle)
        walls.append(end - start)
        idle_share.append(idle / len(inside))
    if not walls:
        sys.exit("no cell has telemetry samples")
    print(f"{len(walls)} cells: median wall {statistics.median(walls):.1f} s, "
          f"median at idle clocks {statistics.median(idle_secs):.0f} s "
          f"({statistics.median(idle_share) * 100:.0f}% of the samples), "
          f"total {sum(idle_secs)} of {sum(walls):.0f} s")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: cell_idle.py CAMPAIGN_DIR [IDLE_MHZ]")
    main(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 400.0)
