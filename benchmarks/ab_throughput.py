"""A/B throughput: the same A/B campaign through the serial lane and the pipelined ones.

Each path is one ``zl ab`` of the same operators and switch in a campaign of its own under
``--out``: ``serial`` (``--pipeline 1``, one cell at a time, as before), ``pipelined``
(``--pipeline N``, the lane's next cells starting while one times, timing one at a time)
``once`` (``--pipeline N --timing once``: the torch reference timed in round 1's cells
only), ``operator`` (``--pipeline N --timing operator``: no cell times the reference, so
every round's cells time alike) and ``released`` (``operator`` with ``--gate-release tests``:
each cell gives the gate back before its teardown). A device call ends at 600 s, so a path runs up to ``--deadline`` seconds of the call
and is then interrupted (SIGINT, as a user's Ctrl-C); the next call resumes it (``zl ab
--resume``) until it is complete. ``compare`` reads the complete campaigns back and prints,
for each path against the serial one:

* A/B cells per hour of each path and their ratio: finished round cells over the time at
  least one of the campaign's cells was running (the union of their windows, so the
  pauses between device calls count for neither path);
* the device-busy share of that time (the union of the intervals the cells timed in);
* for a pipelined path, the seconds its cells held the timing gate, and the cells per hour
  and busy share if the gate never stood idle (a campaign of many operators: a task runs
  its cells one after another, so the last operators of a short campaign leave the
  pipeline draining);
* each path at scale, simulated from its own cells as ``zl ab --plan`` does
  (zl_core.campaigns.ab_estimate): ``--scale-ops`` operators like the measured ones (each
  measured operator repeated) at ``--scale-rounds`` rounds, its cells per hour and their
  ratio to the serial path's and the device-busy share, an estimate labelled so;
* each operator's verdict, estimate and interval in every path, and whether they agree;
* each path's side noise: per shape, the spread (SD of 100 ln latency) of side A's and
  of side B's latency across rounds, the run-to-run noise an A/A campaign measures; the
  median over shapes, per operator and in all, and each path's ratio to the serial one's;
  again over rounds 2 on, where a ``once`` path's cells all time alike.

    python benchmarks/ab_throughput.py run --out DIR --path once --pipeline 3 \
        --deadline 300 -- --switch DISABLE_MMA_V3 --allow-no-ir-diff --rounds 4 --ops ...
    python benchmarks/ab_throughput.py run --out DIR --path serial --deadline 550 -- (the same)
    python benchmarks/ab_throughput.py compare --out DIR
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from zl_core.campaigns.ab_estimate import campaign_like, planned_slots, simulate
from zl_core.campaigns.estimate import history
from zl_core.interface.occupancy import measure  # seconds the spans cover, overlaps once

#: Each path's own arguments to ``zl ab`` beside the shared ones; "serial" is the baseline.
PATHS = {"serial": ("--pipeline", "1"), "pipelined": (), "once": ("--timing", "once"),
         "operator": ("--timing", "operator"),
         "released": ("--timing", "operator", "--gate-release", "tests")}
BASELINE = "serial"


def campaign_of(out: Path, path: str) -> Path | None:
    found = sorted((out / path).glob("ab_*"))
    return found[-1] if found else None


def state_of(campaign: Path) -> str:
    try:
        return json.loads((campaign / "campaign.json").read_text())["state"]
    except (OSError, ValueError, KeyError):
        return "unknown"


def run(args: argparse.Namespace) -> int:
    out = Path(args.out).resolve()
    root = out / args.path
    root.mkdir(parents=True, exist_ok=True)
    campaign = campaign_of(out, args.path)
    if campaign is not None and state_of(campaign) == "complete":
        print(f"{args.path}: {campaign.name} already complete")
        return 0
    if campaign is not None:
        argv = ["zl", "ab", "--resume", str(campaign)]
    else:
        own = PATHS[args.path] or ()
        depth = () if args.path == BASELINE else ("--pipeline", str(args.pipeline))
        argv = ["zl", "ab", "--no-config", "--runs-root", str(root), *depth, *own, *args.zl_args]
    started = time.time()
    with open(root / "sessions.log", "a", encoding="utf-8") as log, \
            open(root / "ab.out", "a", encoding="utf-8") as stdout, \
            open(root / "ab.err", "a", encoding="utf-8") as stderr:
        log.write(f"{time.strftime('%FT%TZ', time.gmtime())} start {' '.join(argv)}\n")
        log.flush()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, start_new_session=True)
        rc = None
        while rc is None:
            try:
                rc = proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                if time.time() - started >= args.deadline:
                    os.killpg(proc.pid, signal.SIGINT)  # as a user's Ctrl-C: the campaign stays resumable
                    try:
                        rc = proc.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        rc = proc.wait()
        log.write(f"{time.strftime('%FT%TZ', time.gmtime())} end rc={rc} wall={time.time() - started:.1f}s\n")
    campaign = campaign_of(out, args.path)
    print(f"{args.path}: rc={rc} after {time.time() - started:.0f}s; "
          f"{campaign.name if campaign else 'no campaign'} {state_of(campaign) if campaign else ''}")
    return 0


# -- reading a campaign back ----------------------------------------------------------------



def cell_records(campaign: Path) -> list[dict]:
    cells = []
    for path in sorted(campaign.glob("*/r*/*/run_identity.json")):
        ident = json.loads(path.read_text())
        phases = ident.get("phases") or {}
        busy = phases.get("device_busy") or {}
        gate = phases.get("timing_gate") or {}
        cells.append({"cell": str(path.parent.relative_to(campaign)), "window": busy.get("window"),
                      "intervals": busy.get("intervals") or [], "finished": "finished" in ident,
                      "rc": ident.get("rc"), "pipeline": ident.get("pipeline"),
                      "waited_s": gate.get("waited_s"), "held": gate.get("held") or [],
                      "seconds": phases.get("seconds") or {}})
    return cells


def report_json(campaign: Path) -> dict:
    done = subprocess.run(["zl", "report", str(campaign), "--json"], capture_output=True, text=True,
                          check=False)
    if done.returncode not in (0, 3):
        raise SystemExit(f"zl report {campaign} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def side_noise(rows: list[dict], first_round: int = 1) -> dict[str, list[float]]:
    """Per operator, each shape's SD of 100 ln(latency) across rounds ``first_round`` on,
    side A and side B."""
    noise: dict[str, list[float]] = {}
    for row in rows:
        for side in ("a_ms", "b_ms"):
            per_round = (row.get(side) or [])[first_round - 1:]
            values = [v for v in per_round if isinstance(v, (int, float)) and v > 0]
            if len(values) >= 3:
                noise.setdefault(row["op"], []).append(statistics.stdev(100 * math.log(v) for v in values))
    return noise


def summary(campaign: Path) -> dict:
    cells = cell_records(campaign)
    windows = [tuple(c["window"]) for c in cells if c["window"]]
    busy = [tuple(s) for c in cells for s in c["intervals"]]
    running = measure(windows)
    report = report_json(campaign)
    ops = {}
    for op in report["summary"]["operators"]:
        mean = (op.get("operator") or {}).get("mean") or {}
        ops[op["op"]] = {"verdict": op["verdict"], "estimate": mean.get("estimate_pct"),
                         "low": mean.get("ci_low_pct"), "high": mean.get("ci_high_pct"),
                         "shape_verdicts": (op.get("operator") or {}).get("counts")}
    finished = sum(c["finished"] for c in cells)
    held = sum(end - start for c in cells for start, end in c["held"])
    return {"campaign": campaign.name, "cells": len(cells), "finished": finished,
            "pipeline": sorted({c["pipeline"] for c in cells if c["pipeline"] is not None}),
            "running_s": running, "busy_s": measure(busy), "cells_per_hour": finished / running * 3600,
            "busy_share": measure(busy) / running if running else None,
            "waited_s": sum(c["waited_s"] or 0.0 for c in cells),
            "held_s": held, "gate_bound_cells_per_hour": finished / held * 3600 if held else None,
            "gate_bound_busy_share": measure(busy) / held if held else None,
            "phase_seconds": {k: sum((c["seconds"].get(k) or 0.0) for c in cells)
                              for k in ("start_imports", "collection", "compilation", "reference_timing",
                                        "operator_timing", "teardown", "other")},
            "operators": ops, "noise": side_noise(report["rows"]),
            "noise_from_round_2": side_noise(report["rows"], first_round=2)}


def compare(args: argparse.Namespace) -> int:
    out = Path(args.out).resolve()
    got = {}
    for path in PATHS:
        campaign = campaign_of(out, path)
        if campaign is None or state_of(campaign) != "complete":
            if path == BASELINE:
                raise SystemExit(f"{path}: no complete campaign under {out / path}; run it first")
            print(f"{path}: no complete campaign under {out / path}; left out")
            continue
        got[path] = summary(campaign)
    base = got[BASELINE]
    others = [p for p in got if p != BASELINE]
    print(f"{'path':<10} {'cells':>5} {'running s':>10} {'cells/h':>8} {'busy s':>8} {'busy':>6} "
          f"{'gate wait s':>11}")
    for path, s in got.items():
        print(f"{path:<10} {s['finished']:>5} {s['running_s']:>10.1f} {s['cells_per_hour']:>8.1f} "
              f"{s['busy_s']:>8.1f} {s['busy_share']:>6.1%} {s['waited_s']:>11.1f}")
    for path in others:
        print(f"ratio ({path} / {BASELINE} cells per hour): "
              f"{got[path]['cells_per_hour'] / base['cells_per_hour']:.2f}x")
    for path in others:
        s = got[path]
        if s["held_s"]:
            print(f"{path}: the gate held {s['held_s']:.1f} s; were it never idle: "
                  f"{s['gate_bound_cells_per_hour']:.1f} cells/h "
                  f"({s['gate_bound_cells_per_hour'] / base['cells_per_hour']:.2f}x), "
                  f"device busy {s['gate_bound_busy_share']:.1%}")
    scaled = {path: at_scale(out / path, got[path], args.scale_ops, args.scale_rounds) for path in got}
    if all(v is not None for v in scaled.values()):
        print(f"\nsimulated at scale ({args.scale_ops} operators like these, {args.scale_rounds} rounds, "
              "each path's pipeline, from its own cells; an estimate):")
        for path, (rate, busy) in scaled.items():
            print(f"  {path:<10} {rate:8.1f} cells/h  {rate / scaled[BASELINE][0]:.2f}x  device busy {busy:.1%}")
            got[path]["at_scale_cells_per_hour"], got[path]["at_scale_busy_share"] = rate, busy
    print("\nphase seconds summed over cells:")
    for key in base["phase_seconds"]:
        print(f"  {key:<18} " + "  ".join(f"{p} {got[p]['phase_seconds'][key]:8.1f}" for p in got))
    print("\nverdicts (estimate [interval], %):")
    agree = True
    for op in sorted(set().union(*(s["operators"] for s in got.values()))):
        seen = [got[p]["operators"].get(op) for p in got]
        same = seen[0] is not None and all(v and v["verdict"] == seen[0]["verdict"] for v in seen)
        agree &= same
        print(f"  {op:<10} " + "  ".join(f"{p} {_shown(v):<38}" for p, v in zip(got, seen, strict=True))
              + f" {'same' if same else 'DIFFERENT'}")
    print(f"verdicts identical: {agree}")
    for key, title in (("noise", "every round"), ("noise_from_round_2", "rounds 2 on")):
        _print_noise(got, key, title)
    (out / "compare.json").write_text(json.dumps(got, indent=1))
    return 0


def at_scale(root: Path, s: dict, ops: int, rounds: int) -> tuple[float, float] | None:
    """Cells per hour of ``ops`` operators like the campaign's at ``rounds`` rounds over its
    pipeline, each planned cell from the campaign's own cells of its side and round class,
    and the share of that wall the device spends timing."""
    hosts = {json.loads(p.read_text()).get("host") for p in root.glob("ab_*/*/r*/*/run_identity.json")}
    if len(hosts) != 1:
        return None
    seen, _ = history(root, "ab", compile_only=False, host=hosts.pop())
    if not seen:
        return None
    slots = planned_slots(rounds, retuned=False, control=False, checks=False)
    tasks = campaign_like(seen, ops, slots)
    wall = simulate(tasks, devices=1, depth=max(s["pipeline"] or [1]))
    return len(tasks) * len(slots) / wall * 3600, sum(c.timing_s for cells in tasks for c in cells) / wall


def _print_noise(got: dict[str, dict], key: str, title: str) -> None:
    print(f"\nside noise, {title} (median over shapes and sides of the SD of 100 ln latency "
          "across rounds, %):")
    base = got[BASELINE]
    pooled: dict[str, list[float]] = {p: [] for p in got}
    for op in sorted(base[key]):
        cells = []
        for p in got:
            values = got[p][key].get(op, [])
            pooled[p] += values
            cells.append(f"{p} {statistics.median(values) if values else float('nan'):6.3f}")
        print(f"  {op:<10} " + "  ".join(cells))
    medians = {p: statistics.median(v) for p, v in pooled.items() if v}
    print(f"  {'all':<10} " + "  ".join(f"{p} {m:6.3f}" for p, m in medians.items()))
    for path in got:
        if path != BASELINE and path in medians and BASELINE in medians:
            print(f"  noise ratio ({path} / {BASELINE}): {medians[path] / medians[BASELINE]:.2f}")


def _shown(v: dict | None) -> str:
    if not v:
        return "missing"
    if v["estimate"] is None:
        return v["verdict"]
    return f"{v['verdict']} {v['estimate']:+.2f} [{v['low']:+.2f}, {v['high']:+.2f}]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run (or resume) one path's campaign up to a deadline")
    r.add_argument("--out", required=True)
    r.add_argument("--path", choices=PATHS, required=True)
    r.add_argument("--pipeline", type=int, default=3, help="the pipelined paths' depth (default 3)")
    r.add_argument("--deadline", type=float, default=540.0, help="seconds before the campaign is interrupted")
    r.add_argument("zl_args", nargs=argparse.REMAINDER, help="-- then zl ab's arguments")
    c = sub.add_parser("compare", help="print both paths' figures")
    c.add_argument("--out", required=True)
    c.add_argument("--scale-ops", type=int, default=100, help="operators of the simulated campaign (100)")
    c.add_argument("--scale-rounds", type=int, default=8, help="its rounds (8, zl ab's default)")
    args = p.parse_args(argv)
    if args.command == "run":
        args.zl_args = args.zl_args[1:] if args.zl_args[:1] == ["--"] else args.zl_args
        return run(args)
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
