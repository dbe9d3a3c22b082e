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
from pathlib import Path

from zl_core.campaigns.ab_estimate import op_cells, planned_slots, simulate
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
    measured = [op_cells([adjust(copy.deepcopy(r)) for side in by_side.values() for r in side], slots)
                for by_side in seen.values()]
    return [cells for _ in range(args.ops // len(measured)) for cells in measured]


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


def warm_serial(record: dict) -> dict:
    cut = max(0.0, record["seconds"]["start_imports"] - args.start_s)
    record["seconds"]["start_imports"] -= cut
    record["wall_s"] -= cut
    return record


CUTS = {
    "as measured": lambda r: r,
    "teardown out of the hold (0.2 s left)": lambda r: shorter_hold(r, max(0.0, after_last_timing(r) - 0.2)),
    "compilation out of the hold": lambda r: shorter_hold(r, r["seconds"].get("compilation") or 0.0),
    "reference not timed": lambda r: shorter_hold(r, r["seconds"].get("reference_timing") or 0.0),
}
CUTS["all three"] = lambda r: CUTS["reference not timed"](CUTS["compilation out of the hold"](
    CUTS["teardown out of the hold (0.2 s left)"](r)))

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
        wall = simulate(tasks("once", cut), devices=1, depth=depth)
        also = f" ({quick / wall:.2f}x against the quicker serial)" if "teardown" in name or "all" in name else ""
        print(f"  once, {name:<40} pipeline {depth}: {cells / wall * 3600:5.0f} cells/h, "
              f"{serial / wall:.2f}x{also}")
