"""What each remaining cost inside a pipelined cell's hold of the gate is worth, simulated
from the cells of docs/validation/2026-12-08-ab-once.md (zl_core.campaigns.ab_estimate):
100 operators like the four measured at 8 rounds, the ``once`` path's cells with one
cost taken out of their holds at a time, against the serial path's cells with start and
imports cut to ``--start-s`` (the torch warm start the serial path lacked there; 4.3-5.0
s a cell in the 12-07 A/A campaign). Estimates, not measurements.

    python docs/validation/scripts/ab_what_if.py DIR [--start-s 4.7]   # DIR: serial/ and once/
"""

import argparse
import copy
import json
import statistics
from pathlib import Path

from zl_core.campaigns.ab_estimate import campaign_like, early_cells, planned_slots, simulate
from zl_core.campaigns.estimate import history

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--start-s", type=float, default=4.7)
parser.add_argument("--ops", type=int, default=100)
parser.add_argument("--rounds", type=int, default=8)
args = parser.parse_args()
root = Path(args.dir)
slots = planned_slots(args.rounds, retuned=False, control=False, checks=False)


def tasks(path: str, adjust) -> list:
    [identity] = list((root / path).glob("ab_*/*/r01/A/run_identity.json"))[:1]
    seen, _ = history(root / path, "ab", compile_only=False, host=json.loads(identity.read_text())["host"])
    adjusted = {op: {side: [adjust(copy.deepcopy(r)) for r in records] for side, records in by_side.items()}
                for op, by_side in seen.items()}
    return campaign_like(adjusted, args.ops, slots)


def shorter_hold(record: dict, seconds: float) -> dict:
    """The cell as if its hold (to its exit) were ``seconds`` shorter."""
    gate = record["timing_gate"]
    gate["held"][-1][1] -= seconds
    if gate.get("exit_seen"):
        gate["exit_seen"] -= seconds
    record["wall_s"] -= seconds
    return record


def after_last_timing(record: dict) -> float:
    gate, intervals = record["timing_gate"], record["device_busy"]["intervals"]
    return gate["held"][-1][1] - intervals[-1][1] + max(0.0, (gate.get("exit_seen") or 0.0) - gate["held"][-1][1])


def untimed_reference(record: dict) -> dict:
    """The cell as if it had not timed the reference: a shorter hold, less device timing."""
    reference = record["seconds"].get("reference_timing") or 0.0
    record["device_busy"]["seconds"] = max(0.0, (record["device_busy"].get("seconds") or 0.0) - reference)
    return shorter_hold(record, reference)


def warm_serial(record: dict) -> dict:
    cut = max(0.0, record["seconds"]["start_imports"] - args.start_s)
    record["seconds"]["start_imports"] -= cut
    record["wall_s"] -= cut
    return record


CUTS = {
    "as measured": lambda r: r,
    "teardown out of the hold (0.2 s left)": lambda r: shorter_hold(r, max(0.0, after_last_timing(r) - 0.2)),
    "compilation out of the hold": lambda r: shorter_hold(r, r["seconds"].get("compilation") or 0.0),
    "reference not timed": untimed_reference,
}
CUTS["all three"] = lambda r: CUTS["reference not timed"](CUTS["compilation out of the hold"](
    CUTS["teardown out of the hold (0.2 s left)"](r)))
# What the 2026-12-08 changes aim at together: --gate-release tests, --timing operator, and
# Triton's cache key (up to 0.3 s of each cell's compilation) computed before the gate.
CUTS["released, operator, key primed"] = lambda r: shorter_hold(
    CUTS["reference not timed"](CUTS["teardown out of the hold (0.2 s left)"](r)),
    min(0.3, r["seconds"].get("compilation") or 0.0))

def quick_teardown(record: dict) -> dict:
    """A serial cell whose teardown took 0.2 s: a faster teardown speeds both paths."""
    cut = max(0.0, (record["seconds"].get("teardown") or 0.0) - 0.2)
    record["wall_s"] -= cut
    return record


cells = args.ops * len(slots)
serial = simulate(tasks("serial", warm_serial), devices=1, depth=1)
quick = simulate(tasks("serial", lambda r: quick_teardown(warm_serial(r))), devices=1, depth=1)
print(f"{args.ops} operators, {args.rounds} rounds, {cells} cells; serial path with start and imports "
      f"at most {args.start_s} s a cell: {cells / serial * 3600:.0f} cells/h, "
      f"{cells / quick * 3600:.0f} with its teardown at 0.2 s too")
for name, cut in CUTS.items():
    for depth in (3, 4):
        planned = tasks("once", cut)
        wall = simulate(planned, devices=1, depth=depth)
        busy = sum(c.timing_s for cells_ in planned for c in cells_) / wall
        also = f" ({quick / wall:.2f}x against the quicker serial)" if "teardown" in name or "all" in name or "released" in name else ""
        print(f"  once, {name:<40} pipeline {depth}: {cells / wall * 3600:5.0f} cells/h, "
              f"{serial / wall:.2f}x{also}, device busy {busy:.0%}")

# The floor: what the device's own timing costs, whatever overlaps it (no cell's timing
# can overlap another's). Each planned cell at its operator's timing in the once path's
# later rounds (the operator alone) and round 1 (reference too, and A's sweep).
[identity] = list((root / "once").glob("ab_*/*/r01/A/run_identity.json"))[:1]
seen, _ = history(root / "once", "ab", compile_only=False, host=json.loads(identity.read_text())["host"])
timed = {op: {first: [sum(float((r["seconds"] or {}).get(k) or 0.0) for k in
                          ("operator_timing", "autotune_sweep", *(("reference_timing",) if first else ())))
                      for side in by_side.values() for r in side if (r["round"] == 1) == first]
              for first in (True, False)} for op, by_side in seen.items()}
per_op = {op: 2 * statistics.mean(t[True]) + (len(slots) - 2) * statistics.mean(t[False]) for op, t in timed.items()}
mean = statistics.mean(per_op.values())
print(f"device timing per changed operator at {args.rounds} rounds (the once path's cells): "
      + ", ".join(f"{op} {s:.0f} s" for op, s in sorted(per_op.items())) + f"; mean {mean:.0f} s")
for changed in (425, 400):
    print(f"  {changed} changed operators like these: {changed * mean / 3600:.1f} h of timing alone on one device")


# An operator's later cells starting as the cell before them takes the gate (built after
# these campaigns ran: zl_core.campaigns.prefetch), the once cells as measured, pipeline 3.
print("an operator's later cells starting while the one before holds the gate, "
      "the once path's cells as measured, pipeline 3:")
for count in (1, 4, args.ops):
    planned = campaign_like(seen, count, slots)
    n = count * len(slots)
    before = simulate(planned, devices=1, depth=3)
    now = simulate(planned, devices=1, depth=3, early=early_cells(slots))
    print(f"  {count:>3} operator(s): {n / before * 3600:4.0f} cells/h without it, {n / now * 3600:4.0f} with it")
