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
