"""Compare bare FlagGems runs with zl cells of the same op (direct timer): per
shape gems latency, so the harness's own effect can be set against run-to-run noise.

usage: python overhead.py RUNS_DIR   (expects bare_add_{1,2}.log and zl_add_{1,2}/)
"""

import statistics
import sys
from pathlib import Path

from zl_core.rows import parse_table, read_rows

root = Path(sys.argv[1])
bare = [parse_table((root / f"bare_add_{i}.log").read_text(errors="replace")) for i in (1, 2)]
zl = [read_rows(root / f"zl_add_{i}") for i in (1, 2)]


def by_shape(rows):
    return {(r.dtype, r.size_detail): r.gems_latency_ms for r in rows if r.status == "SUCCESS"}


b1, b2, z1, z2 = (by_shape(x) for x in (*bare, *zl))
print(f"{'shape':48} {'bare1':>9} {'bare2':>9} {'zl1':>9} {'zl2':>9}  bare-vs-bare  zl-vs-bare")
noise, effect = [], []
for key in b1:
    if key not in b2 or key not in z1 or key not in z2:
        continue
    bb = abs(b1[key] / b2[key] - 1) * 100
    zb = (statistics.median([z1[key], z2[key]]) / statistics.median([b1[key], b2[key]]) - 1) * 100
    noise.append(bb)
    effect.append(zb)
    print(f"{key[1][:48]:48} {b1[key]:9.4f} {b2[key]:9.4f} {z1[key]:9.4f} {z2[key]:9.4f}  {bb:10.1f}%  {zb:+9.1f}%")
if noise:
    print(f"median |bare1/bare2-1| = {statistics.median(noise):.1f}%  "
          f"median (zl/bare-1) = {statistics.median(effect):+.1f}%")
