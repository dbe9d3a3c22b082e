"""zl's own cost per cell: a campaign's wall time minus the time its cells ran.

usage: executor_cost.py LABEL CAMPAIGN WALLFILE[,WALLFILE...] [LABEL CAMPAIGN WALLS ...]

Each WALLFILE holds "START END" in epoch seconds (one per zl invocation of that
campaign, e.g. the killed run and its --resume). The cells' time is the sum of
status.tsv's elapsed_s; what is left is what zl spent around them (planning, the
switch check, starting cells, writing status and reports). In a killed campaign the
cell that was running when the kill came is counted in the wall but has no status
row, so that path's figure includes the lost half cell.
"""

import csv
import sys
from pathlib import Path


def cost(label: str, campaign: Path, walls: list[Path]) -> None:
    with open(campaign / "status.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    cells = sum(float(r["elapsed_s"] or 0) for r in rows)
    wall = 0.0
    for path in walls:
        start, end = (float(x) for x in path.read_text().split())
        wall += end - start
    per_cell = (wall - cells) / len(rows) if rows else float("nan")
    print(f"{label}: {len(rows)} cells, wall {wall:.1f} s, cells {cells:.1f} s, "
          f"zl's own {wall - cells:.1f} s = {per_cell:.2f} s a cell "
          f"({(wall - cells) / cells * 100:.1f}% of the cells' time)")


def main() -> None:
    args = sys.argv[1:]
    if not args or len(args) % 3:
        sys.exit(__doc__)
    for i in range(0, len(args), 3):
        cost(args[i], Path(args[i + 1]), [Path(w) for w in args[i + 2].split(",")])


if __name__ == "__main__":
    main()
