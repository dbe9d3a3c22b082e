"""Bare FlagGems runs against zl cells of the same op (direct timer), per shape:
how much the harness moves a direct-timed latency, set against how much two bare
runs differ from each other.

usage: python overhead.py RUNS_DIR [REPS]  (expects bare_add_<i>.log and zl_add_<i>/)
"""

import statistics
import sys
from pathlib import Path

from zl_core.plugins.cell_rows import read_rows
from zl_flaggems.host.table import parse_table

root = Path(sys.argv[1])
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2


def by_shape(rows):
    return {(r.dtype, r.size_detail): r.gems_latency_ms for r in rows if r.status == "SUCCESS"}


bare = [by_shape(parse_table((root / f"bare_add_{i}.log").read_text(errors="replace")))
        for i in range(1, reps + 1)]
zl = [by_shape(read_rows(root / f"zl_add_{i}")) for i in range(1, reps + 1)]
shapes = [k for k in bare[0] if all(k in b for b in bare) and all(k in z for z in zl)]
print(f"{'shape':44} {'bare median':>12} {'bare spread':>12} {'zl median':>10} {'zl/bare-1':>10}")
spreads, effects = [], []
for key in shapes:
    b = [x[key] for x in bare]
    z = [x[key] for x in zl]
    spread = (max(b) / min(b) - 1) * 100
    effect = (statistics.median(z) / statistics.median(b) - 1) * 100
    spreads.append(spread)
    effects.append(effect)
    print(f"{key[1][:44]:44} {statistics.median(b):12.5f} {spread:11.1f}% {statistics.median(z):10.5f} {effect:+9.1f}%")
if shapes:
    print(f"median bare-vs-bare spread {statistics.median(spreads):.1f}%; "
          f"median harness effect {statistics.median(effects):+.1f}%")
