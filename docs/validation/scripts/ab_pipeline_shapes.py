"""Per shape and side, the latency of each round in both paths of benchmarks/ab_throughput.py
(docs/validation/2026-12-07-ab-pipeline.md): which shapes the pipeline made noisier.

    python docs/validation/scripts/ab_pipeline_shapes.py DIR   # DIR: campaigns.tgz unpacked
"""

import json
import math
import statistics
import sys
from pathlib import Path

root = Path(sys.argv[1])
for op in ("relu", "softmax", "mm", "bmm"):
    for path in ("serial", "pipelined"):
        campaign = sorted((root / path).glob("ab_*"))[0]
        by_shape: dict[tuple[str, str], list[float]] = {}
        for side in "AB":
            for round_dir in sorted((campaign / op).glob("r*")):
                rows = json.loads((round_dir / side / "results.json").read_text())["rows"]
                for row in rows:
                    by_shape.setdefault((row["size_detail"], side), []).append(row["latency_ms"] * 1000)
        for (shape, side), us in sorted(by_shape.items()):
            sd = statistics.stdev(100 * math.log(u) for u in us)
            print(f"{op:<8} {path:<9} {side} {shape[:60]:<60} sd {sd:5.2f}%  "
                  + " ".join(f"{u:9.2f}" for u in us))

# Per pipelined relu and softmax cell: how long its hold of the gate overlapped the other
# cells' time before their holds (start, imports, collection, first inputs, the wait) and
# after them (IR dump, teardown) -- the figures the write-up's "about 20 s" comes from.
# (The run of 0087011 gave the gate back at the end of the tests, so holds closed then.)
piped = sorted((root / "pipelined").glob("ab_*"))[0]
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
