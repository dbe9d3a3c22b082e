"""Per-cell phase figures of one A/B campaign, as the write-ups quote them
(docs/validation/2026-12-08-ab-once.md):

* each operator's median interpreter start and imports, and its mean compilation in
  round 1 and in later rounds (the per-side compile cache);
* the range of the cells' teardown;
* for a pipelined campaign, what the holds of the timing gate held: the device's timing,
  the time before the first timing interval, between intervals and after the last; and
  the stretches in which no cell held the gate (the pipeline drained).

    python docs/validation/scripts/ab_cell_phases.py CAMPAIGN   # an ab_* folder
"""

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

campaign = Path(sys.argv[1])
cells = []
for path in sorted(campaign.glob("*/r*/*/run_identity.json")):
    identity = json.loads(path.read_text())
    op, round_dir, side = path.parent.relative_to(campaign).parts
    cells.append((op, round_dir, side, identity.get("phases") or {}))

starts, compiles = defaultdict(list), defaultdict(list)
for op, round_dir, _side, phases in cells:
    seconds = phases.get("seconds") or {}
    starts[op].append(seconds.get("start_imports") or 0.0)
    compiles[(op, round_dir == "r01")].append(seconds.get("compilation") or 0.0)
for op in sorted(starts):
    later = compiles[(op, False)]
    print(f"{op:<10} start and imports median {statistics.median(starts[op]):5.2f} s; compilation "
          f"round 1 {statistics.mean(compiles[(op, True)]):5.2f} s, later "
          f"{statistics.mean(later) if later else float('nan'):5.2f} s")
teardown = [(p.get("seconds") or {}).get("teardown") or 0.0 for *_, p in cells] or [0.0]
print(f"teardown {min(teardown):.2f}-{max(teardown):.2f} s a cell, {sum(teardown):.1f} s in all")

holds = []
held = busy = before = between = after = 0.0
for op, round_dir, side, phases in cells:
    gate, device = phases.get("timing_gate") or {}, phases.get("device_busy") or {}
    if not gate.get("held"):
        continue
    taken, given = gate["held"][0]
    held += sum(end - start for start, end in gate["held"])
    intervals = device.get("intervals") or []
    busy += device.get("seconds") or 0.0
    if intervals:
        before += intervals[0][0] - taken
        after += given - intervals[-1][1]
        between += (intervals[-1][1] - intervals[0][0]) - sum(e - s for s, e in intervals)
    holds.append((taken, given, f"{op}/{round_dir}/{side}"))
if holds:
    print(f"gate held {held:.1f} s: device timing {busy:.1f} s ({busy / held:.1%}), before the first "
          f"interval {before:.1f} s, between intervals {between:.1f} s, after the last {after:.1f} s")
    holds.sort()
    reach, idle, stretches = holds[0][1], 0.0, 0
    for taken, given, _name in holds[1:]:
        if taken - reach > 0.5:
            idle += taken - reach
            stretches += 1
        reach = max(reach, given)
    print(f"no cell held the gate for {idle:.1f} s in {stretches} stretch(es) between the first hold "
          "and the last")
