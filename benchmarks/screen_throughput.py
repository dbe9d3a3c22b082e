"""Screen throughput: the same operators through the screen as it was and as it is now.

Each path is one ``zl screen`` of the same operator list, in a fresh campaign; the
script times it, reads the campaign back (``zl report --json``: verdicts and where the
time went; every cell's identity: how it started, its longest silence, whether it
stalled) and prints operators per hour for each path, their ratio, and whether the
verdicts and the TTGIR fingerprints agree. A device call ends at 600 s, so each path
can run in its own call (``--path``) with its results kept in ``--out``; ``--compare``
prints the table from what earlier calls left there.

``--stall-op OP`` makes that operator's benchmark hang, silent (benchmarks/screen_stall.py),
in both paths: the old path has no stall window, so its cell ends at ``--timeout``; the
new one ends it as STALLED after ``--stall-timeout``.

    python benchmarks/screen_throughput.py --out DIR --path old --stall-op exp -- \
        --flaggems-dir FG --ops mm abs exp --timeout 150 --stall-timeout 60
    python benchmarks/screen_throughput.py --out DIR --path new --stall-op exp -- (the same)
    python benchmarks/screen_throughput.py --out DIR --compare
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

#: What each path adds to the user's screen arguments. "old": the screen as it was
#: before the throughput work (the reference timed too, no stall window).
PATHS = {
    "old": ["--timing", "full", "--stall-timeout", "0", "--start", "cold", "--per-device", "1"],
    "new": ["--start", "warm", "--per-device", "4"],
}
HERE = Path(__file__).resolve().parent


def stall_env(op: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if op:
        env["ZL_BENCH_STALL_OP"] = op
        env["PYTEST_ADDOPTS"] = (env.get("PYTEST_ADDOPTS", "") + " -p screen_stall").strip()
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def cells(campaign: Path) -> dict[str, dict]:
    """op/side -> what its identity says about how it ran."""
    found = {}
    for path in sorted(campaign.glob("*/[AB]/run_identity.json")):
        ident = json.loads(path.read_text())
        found[f"{path.parent.parent.name}/{path.parent.name}"] = {
            key: ident.get(key) for key in ("start", "concurrency", "elapsed_s", "longest_silence_s",
                                            "stalled", "timed_out", "rc", "warm_modules")}
    return found


def run_path(out: Path, name: str, screen_args: list[str], stall_op: str | None) -> dict:
    root = out / name
    root.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "zl_core", "screen", *screen_args, *PATHS[name],
            "--runs-root", str(root / "runs")]
    started = time.time()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=stall_env(stall_op))
    wall = time.time() - started
    (root / "screen.log").write_text(proc.stdout + proc.stderr)
    campaign = max((root / "runs").glob("screen_*"))
    report = subprocess.run([sys.executable, "-m", "zl_core", "report", str(campaign), "--json",
                             "--allow-incomplete"], capture_output=True, text=True, check=False)
    model = json.loads(report.stdout)
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    result = {"path": name, "argv": argv[3:], "rc": proc.returncode, "wall_s": round(wall, 1),
              "campaign": str(campaign), "stall_op": stall_op,
              "verdicts": {r["op"]: r["verdict"] for r in model["rows"]},
              "fingerprints": {r["op"]: [r.get("fingerprint_a", ""), r.get("fingerprint_b", "")]
                               for r in rows},
              "cells": cells(campaign),
              "time_spent": model["summary"].get("time_spent")}
    (root / "result.json").write_text(json.dumps(result, indent=1))
    return result


def compare(out: Path) -> str:
    results = {n: json.loads((out / n / "result.json").read_text())
               for n in PATHS if (out / n / "result.json").is_file()}
    lines = ["| path | operators | wall | operators per hour | " + " | ".join(PHASE_COLUMNS) + " |",
             "|---|---|---|---|" + "---|" * len(PHASE_COLUMNS)]
    rate = {}
    for name, r in results.items():
        n = len(r["verdicts"])
        rate[name] = n / r["wall_s"] * 3600 if r["wall_s"] else 0.0
        seconds = (r.get("time_spent") or {}).get("seconds") or {}
        lines.append(f"| {name} | {n} | {r['wall_s']:.0f} s | {rate[name]:.0f} | "
                     + " | ".join(f"{seconds.get(p, 0):.0f} s" for p in PHASE_COLUMNS) + " |")
    if {"old", "new"} <= set(results):
        old, new = results["old"], results["new"]
        stall = new.get("stall_op")
        a, b = old["verdicts"], new["verdicts"]
        differ = sorted(op for op in set(a) | set(b) if a.get(op) != b.get(op) and op != stall)
        lines.append("")
        lines.append(f"new / old operators per hour: {rate['new'] / rate['old']:.2f}x" if rate["old"]
                     else "old path measured no operator")
        lines.append("verdicts: identical" + (f" (the stalled {stall} aside)" if stall else "")
                     if not differ else
                     "verdicts differ: " + ", ".join(f"{op} {a.get(op)} -> {b.get(op)}" for op in differ))
        fa, fb = old.get("fingerprints", {}), new.get("fingerprints", {})
        same = sorted(op for op in fa if op in fb and fa[op] == fb[op] and op != stall)
        other = sorted(op for op in fa if op in fb and fa[op] != fb[op] and op != stall)
        lines.append(f"TTGIR fingerprints (A, B) equal for {len(same)} operator(s)"
                     + (f"; different for {', '.join(other)}" if other else ""))
        if stall:
            for name, r in (("old", old), ("new", new)):
                cell = r.get("cells", {}).get(f"{stall}/A", {})
                lines.append(f"{name}: {stall} {r['verdicts'].get(stall)} after {cell.get('elapsed_s')} s "
                             f"(rc {cell.get('rc')})")
        for name, r in (("old", old), ("new", new)):
            quiet = [c.get("longest_silence_s") or 0.0 for key, c in r.get("cells", {}).items()
                     if not key.startswith(f"{stall}/")]
            starts = sorted({str(c.get("start")) for c in r.get("cells", {}).values()})
            lines.append(f"{name}: longest silence of a cell that finished {max(quiet, default=0):.1f} s; "
                         f"starts {', '.join(starts)}")
    return "\n".join(lines)


PHASE_COLUMNS = ("start_imports", "collection", "autotune_sweep", "compilation",
                 "reference_timing", "operator_timing", "ir_dump", "teardown", "other")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="where each path's campaign and result go")
    p.add_argument("--path", choices=sorted(PATHS), action="append", default=[],
                   help="run this path (repeatable; default: both)")
    p.add_argument("--compare", action="store_true", help="only print the table of earlier runs")
    p.add_argument("--stall-op", metavar="OP", help="make this operator's benchmark hang (both paths)")
    p.add_argument("screen_args", nargs=argparse.REMAINDER,
                   help="after --: the zl screen arguments both paths share")
    args = p.parse_args()
    screen_args = [a for a in args.screen_args if a != "--"]
    if not args.compare:
        for name in args.path or list(PATHS):
            r = run_path(args.out, name, screen_args, args.stall_op)
            print(f"{name}: rc={r['rc']} {len(r['verdicts'])} operator(s) in {r['wall_s']:.0f} s")
    print(compare(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
