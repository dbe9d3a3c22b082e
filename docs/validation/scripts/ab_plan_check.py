"""``zl ab --plan``'s estimate against A/B campaigns that ran: each campaign planned from
its own cells (zl_core.campaigns.ab_estimate), the simulated wall beside the time at
least one of its cells ran, and what a median cell times the cells (the estimate before
the simulation) would have said.

    python docs/validation/scripts/ab_plan_check.py DIR [DEPTH]   # DIR: holds one ab_* folder
"""

import json
import statistics
import sys
from pathlib import Path

from zl_core.campaigns.ab_estimate import ab_estimate, cell_cost, planned_slots
from zl_core.campaigns.estimate import history
from zl_core.interface.occupancy import measure

root = Path(sys.argv[1])
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
[campaign] = root.glob("ab_*")
identities = [json.loads(p.read_text()) for p in campaign.glob("*/r*/*/run_identity.json")]
running = measure([tuple(i["phases"]["device_busy"]["window"]) for i in identities])
host = identities[0]["host"]
rounds = max(int(p.name[1:]) for p in campaign.glob("*/r*"))
seen, read = history(root, "ab", compile_only=False, host=host)
slots = planned_slots(rounds, retuned=False, control=False, checks=False)
est = ab_estimate(sorted(seen), seen, slots, devices=1, depth=depth, campaigns_read=read)
print(f"{campaign.name}: {len(identities)} cells, {rounds} rounds, pipeline {depth}")
print(f"  ran for {running:.1f} s (the time at least one cell ran)")
print(f"  simulated {est.makespan_s:.1f} s ({est.makespan_s / running - 1:+.1%}); one after the other "
      f"{est.total_s:.1f} s; the device timing {est.timing_s:.1f} s of it")
costs = [cell_cost(r) for by_side in seen.values() for side in by_side.values() for r in side]
hold = statistics.median(c.hold_s for c in costs)
wall = statistics.median(c.wall_s for c in costs)
flat = (hold if depth > 1 else wall) * len(slots) * len(seen)
print(f"  a median cell times the cells: {flat:.1f} s ({flat / running - 1:+.1%})")
