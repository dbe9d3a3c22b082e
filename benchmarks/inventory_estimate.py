"""The whole answer for an inventory: the screen of every operator, then A/B rounds of those
whose TTGIR changed, from measured costs (issue 44's README figure).

Three steps, each a command:

``draw``
    ``--n`` operators drawn at random (``--seed``) from the suite's inventory (``zl ops
    --json``, operators the suite marks skipped left out), written to ``DIR/drawn.json``.
``screen``
    ``zl screen`` of the drawn operators at the defaults plus the given arguments (the
    switch), in ``DIR/screen``; interrupted at ``--deadline`` and resumed by the next call
    until complete.
``estimate``
    From the screen: its seconds per operator (the time at least one of its cells ran,
    the union of their windows, over the operators) and the fraction whose TTGIR changed;
    from an A/B campaign (``--ab``, e.g. one of ``benchmarks/ab_throughput.py``'s): the A/B
    rounds of the changed operators simulated from its cells as ``zl ab --plan`` does
    (zl_core.campaigns.ab_estimate: operators like the measured ones, each planned cell
    from that operator's cells of its side and round class, over the campaign's pipeline
    depth), at ``--rounds`` rounds (16 cells per changed operator at the default 8). It
    prints the whole answer for ``--inventory`` operators, for the seed's ratio (38%) and
    for the screen's own, on one device and over ``--devices`` (the screen's operators
    divided over the cards, the bound a host of that many cards reaches at best; the A/B
    lanes simulated one per card).

    python benchmarks/inventory_estimate.py draw --out DIR --seed 20261207 --n 16 -- --flaggems-dir FG
    python benchmarks/inventory_estimate.py screen --out DIR --deadline 500 -- --switch DISABLE_MMA_V3
    python benchmarks/inventory_estimate.py estimate --out DIR --ab .abt/pipelined --inventory 1119
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from zl_core.campaigns.ab_estimate import campaign_like, planned_slots, simulate
from zl_core.campaigns.estimate import history
from zl_core.interface.occupancy import measure  # seconds the spans cover, overlaps once

SEED_RATIO = 0.38  # the seed's RLC switch: 8 of 21 operators changed



def windows(campaign: Path, pattern: str) -> tuple[list[tuple[float, float]], int]:
    """The windows of the campaign's finished cells matching ``pattern``, and their count."""
    spans, finished = [], 0
    for path in campaign.glob(pattern):
        ident = json.loads(path.read_text())
        window = ((ident.get("phases") or {}).get("device_busy") or {}).get("window")
        if window and "finished" in ident:
            spans.append(tuple(window))
            finished += 1
    return spans, finished


def draw(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    listing = subprocess.run(["zl", "ops", "--json", *args.zl_args], capture_output=True, text=True,
                             check=False)
    if listing.returncode != 0:
        raise SystemExit(f"zl ops failed ({listing.returncode}): {listing.stderr.strip()[-300:]}")
    ops = sorted({o["op"] for o in json.loads(listing.stdout) if not o.get("skip")})
    drawn = sorted(random.Random(args.seed).sample(ops, min(args.n, len(ops))))
    (out / "drawn.json").write_text(json.dumps({"seed": args.seed, "inventory": len(ops), "ops": drawn,
                                                "zl_args": args.zl_args}, indent=1))
    print(f"drew {len(drawn)} of {len(ops)} operators (seed {args.seed}): {' '.join(drawn)}")
    return 0


def screen(args: argparse.Namespace) -> int:
    out = Path(args.out).resolve()
    plan = json.loads((out / "drawn.json").read_text())
    root = out / "screen"
    root.mkdir(exist_ok=True)
    found = sorted(root.glob("screen_*"))
    if found and json.loads((found[-1] / "campaign.json").read_text()).get("state") == "complete":
        print(f"screen {found[-1].name} already complete")
        return 0
    argv = (["zl", "screen", "--resume", str(found[-1])] if found else
            ["zl", "screen", "--no-config", "--runs-root", str(root), *plan["zl_args"], *args.zl_args,
             "--ops", *plan["ops"]])
    started = time.time()
    with open(root / "screen.out", "a", encoding="utf-8") as stdout, \
            open(root / "screen.err", "a", encoding="utf-8") as stderr:
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, start_new_session=True)
        rc = None
        while rc is None:
            try:
                rc = proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                if time.time() - started >= args.deadline:
                    os.killpg(proc.pid, signal.SIGINT)  # resumable, as a user's Ctrl-C
                    rc = proc.wait()
    print(f"screen: rc={rc} after {time.time() - started:.0f}s")
    return 0


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def estimate(args: argparse.Namespace) -> int:
    out = Path(args.out)
    (campaign,) = sorted((out / "screen").glob("screen_*"))[-1:]
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    timed = [r for r in rows if r["verdict"] not in ("SKIPPED",)]
    changed = sum(1 for r in timed if r["verdict"] == "IR_CHANGED")
    spans, _cells = windows(campaign, "*/[AB]/run_identity.json")
    per_op = measure(spans) / len(timed)
    ab = Path(args.ab) if (Path(args.ab) / "campaign.json").is_file() else sorted(Path(args.ab).glob("ab_*"))[-1]
    identities = [json.loads(p.read_text()) for p in ab.glob("*/r*/*/run_identity.json")]
    ab_spans, ab_cells = windows(ab, "*/r*/*/run_identity.json")
    depth = max(int(i.get("pipeline") or 1) for i in identities)
    seen, _ = history(ab.parent, "ab", compile_only=False, host=identities[0]["host"])
    slots = planned_slots(args.rounds, retuned=False, control=False, checks=False)
    screen_s = per_op * args.inventory
    print(f"screen: {len(timed)} operators in {measure(spans):.0f} s, {per_op:.1f} s each; "
          f"{changed} IR_CHANGED ({changed / len(timed):.0%})")
    print(f"A/B ({ab.name}): {ab_cells} round cells of {len(seen)} operators in {measure(ab_spans):.0f} s, "
          f"pipeline {depth}; simulated at {args.rounds} rounds ({len(slots)} cells per changed operator)")
    for label, ratio in ((f"the seed's ratio {SEED_RATIO:.0%}", SEED_RATIO),
                         (f"this switch's ratio {changed / len(timed):.0%}", changed / len(timed))):
        tasks = campaign_like(seen, round(ratio * args.inventory), slots)
        one, many = (simulate(tasks, devices=n, depth=depth) for n in (1, args.devices))
        print(f"{args.inventory} operators, {label}, {len(tasks)} changed: screen {hours(screen_s)} + "
              f"A/B {hours(one)} = {hours(screen_s + one)} on one device; "
              f"{hours(screen_s / args.devices + many)} at best over {args.devices}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("draw")
    d.add_argument("--out", required=True)
    d.add_argument("--seed", type=int, default=20261207)
    d.add_argument("--n", type=int, default=16)
    d.add_argument("zl_args", nargs=argparse.REMAINDER)
    s = sub.add_parser("screen")
    s.add_argument("--out", required=True)
    s.add_argument("--deadline", type=float, default=500.0)
    s.add_argument("zl_args", nargs=argparse.REMAINDER)
    e = sub.add_parser("estimate")
    e.add_argument("--out", required=True)
    e.add_argument("--ab", required=True, help="an A/B campaign, or a folder holding one")
    e.add_argument("--inventory", type=int, default=1119)
    e.add_argument("--rounds", type=int, default=8)
    e.add_argument("--devices", type=int, default=8)
    args = p.parse_args(argv)
    if hasattr(args, "zl_args"):
        args.zl_args = args.zl_args[1:] if args.zl_args[:1] == ["--"] else args.zl_args
    return {"draw": draw, "screen": screen, "estimate": estimate}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
