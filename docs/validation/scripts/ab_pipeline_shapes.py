"""Per shape and side, the latency of each round in the paths of benchmarks/ab_throughput.py
(docs/validation/2026-12-07-ab-pipeline.md, 2026-12-08-ab-once.md): which shapes a pipeline
made noisier, and whether the extra spread is a spike or a shift between rounds.

    python docs/validation/scripts/ab_pipeline_shapes.py DIR [BASE PIPED] [--rounds r02,r03,r04]

DIR: a campaigns.tgz unpacked; BASE and PIPED: its two paths (default serial pipelined).
--rounds: judge the side noise over these rounds only (default every round).
"""

import json
import math
import statistics
import sys
from pathlib import Path

args = sys.argv[1:]
rounds = None
if "--rounds" in args:
    at = args.index("--rounds")
    rounds = set(args[at + 1].split(","))
    del args[at:at + 2]
root = Path(args[0])
paths = tuple(args[1:3]) if len(args) >= 3 else ("serial", "pipelined")
OPS = ("relu", "softmax", "mm", "bmm")

medians: dict[tuple[str, str], float] = {}
for op in OPS:
    for path in paths:
        campaign = sorted((root / path).glob("ab_*"))[0]
        by_shape: dict[tuple[str, str], list[float]] = {}
        for side in "AB":
            for round_dir in sorted((campaign / op).glob("r*")):
                if rounds is not None and round_dir.name not in rounds:
                    continue
                rows = json.loads((round_dir / side / "results.json").read_text())["rows"]
                for row in rows:
                    key = (f"{row['size_detail']}#{row.get('occurrence', 0)}", side)
                    by_shape.setdefault(key, []).append(row["latency_ms"] * 1000)
        sds = []
        for (shape, side), us in sorted(by_shape.items()):
            sd = statistics.stdev(100 * math.log(u) for u in us)
            sds.append(sd)
            print(f"{op:<8} {path:<9} {side} {shape[:60]:<60} sd {sd:5.2f}%  "
                  + " ".join(f"{u:9.2f}" for u in us))
        medians[(op, path)] = statistics.median(sds)

print("\nside noise, median over the shape-sides of the SD of 100 ln latency across rounds "
      f"({'every round' if rounds is None else ', '.join(sorted(rounds))}):")
for op in OPS:
    print(f"  {op:<8} " + "  ".join(f"{path} {medians[(op, path)]:.3f}" for path in paths))

# Per pipelined relu and softmax cell: how long its hold of the gate overlapped the other
# cells' time before their holds (start, imports, collection, first inputs, the wait) and
# after them (IR dump, teardown) -- the figures the write-ups' "about 20 s" come from.
# (The run of 0087011 gave the gate back at the end of the tests, so holds closed then.)
piped = sorted((root / paths[1]).glob("ab_*"))[0]
spans = {}
for path in sorted(piped.glob("*/r*/*/run_identity.json")):
    record = json.loads(path.read_text())["phases"]
    spans[str(path.parent.relative_to(piped))] = (record["device_busy"]["window"],
                                                   record["timing_gate"]["held"][0])
for name, (_window, (taken, given)) in spans.items():
    if not name.startswith(("relu", "softmax")):
        continue
    before = after = 0.0
    for other, (window2, (taken2, given2)) in spans.items():
        if other != name:
            before += max(0.0, min(taken2, given) - max(window2[0], taken))
            after += max(0.0, min(window2[1], given) - max(given2, taken))
    print(f"{name:<16} held {given - taken:5.1f} s; beside it, others before their hold "
          f"{before:5.1f} s, after theirs {after:5.1f} s")
