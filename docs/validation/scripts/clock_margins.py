"""How far a campaign's cells are from the SM clock flag, judged by zl_core.decisions.drift.

    python docs/validation/scripts/clock_margins.py CAMPAIGN [CAMPAIGN ...]

For every campaign: the clock flags at the default fraction (0.75), and the lowest
fraction at which some cell is flagged (stepping by 0.01 up to 1.0), with the cells
flagged there. A margin well above 0.75 means the campaign's normal clocks sit far from
the rule. Cells are windowed and grouped as ``zl report`` does (status.tsv, the cell's
own device, ``load_group``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from zl_core.decisions import drift
from zl_core.decisions.status import latest_by_cell, read_status
from zl_core.store.layout import CampaignLayout


def clock_flags(windows, samples, fraction: float) -> dict[str, str]:
    flags = drift.flag_cells(windows, samples, clock_fraction=fraction)
    return {f.label: c for f in flags for c in f.flags if c.startswith("sm_clock_low")}


def main() -> None:
    for campaign in map(Path, sys.argv[1:]):
        cells = latest_by_cell(read_status(campaign))
        windows = [drift.CellWindow(label=f"{op} r{rnd:02d}/{side}", device=row.device or None,
                                    start=float(row.start), end=float(row.end),
                                    group=drift.load_group(op, rnd, side))
                   for (op, rnd, side), row in cells.items()
                   if float(row.end) > float(row.start)]
        samples = drift.read_telemetry_tsv(CampaignLayout(campaign).telemetry_file)
        print(f"{campaign.name}: {len(windows)} cells, {len(samples)} samples")
        print(f"  at 0.75: {clock_flags(windows, samples, 0.75) or 'no clock flag'}")
        for step in range(75, 101):
            flagged = clock_flags(windows, samples, step / 100)
            if flagged:
                print(f"  first flagged at {step / 100:.2f}: {flagged}")
                break
        else:
            print("  no cell flagged up to 1.00")


if __name__ == "__main__":
    main()
