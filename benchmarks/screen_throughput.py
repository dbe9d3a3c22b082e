"""Screen throughput: the same operators through today's path and the new one.

Each path is one ``zl screen`` of the same operator list, in a fresh campaign; the
script times it, reads the campaign back (``zl report --json``: verdicts and where the
time went) and prints operators per hour for each path, their ratio and whether the
verdicts agree. A device call ends at 600 s, so each path can run in its own call
(``--path``) with its results kept in ``--out``; ``--compare`` prints the table from
what earlier calls left there.

    python benchmarks/screen_throughput.py --out DIR --path old -- --flaggems-dir FG --ops mm abs
    python benchmarks/screen_throughput.py --out DIR --path new -- --flaggems-dir FG --ops mm abs
    python benchmarks/screen_throughput.py --out DIR --compare
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

#: What each path adds to the user's screen arguments. "old": the screen as it was
#: before the throughput work (the reference timed too, no stall window).
PATHS = {
    "old": ["--timing", "full", "--stall-timeout", "0"],
    "new": [],  # the defaults
}


def run_path(out: Path, name: str, screen_args: list[str]) -> dict:
    root = out / name
    root.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "zl_core", "screen", *screen_args, *PATHS[name],
            "--runs-root", str(root / "runs")]
    started = time.time()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.time() - started
    (root / "screen.log").write_text(proc.stdout + proc.stderr)
    campaign = max((root / "runs").glob("screen_*"))
    report = subprocess.run([sys.executable, "-m", "zl_core", "report", str(campaign), "--json",
                             "--allow-incomplete"], capture_output=True, text=True, check=False)
    model = json.loads(report.stdout)
    result = {"path": name, "argv": argv[3:], "rc": proc.returncode, "wall_s": round(wall, 1),
              "campaign": str(campaign),
              "verdicts": {r["op"]: r["verdict"] for r in model["rows"]},
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
        a, b = results["old"]["verdicts"], results["new"]["verdicts"]
        differ = sorted(op for op in set(a) | set(b) if a.get(op) != b.get(op))
        lines.append("")
        lines.append(f"new / old operators per hour: {rate['new'] / rate['old']:.2f}x" if rate["old"]
                     else "old path measured no operator")
        lines.append("verdicts: identical" if not differ else
                     "verdicts differ: " + ", ".join(f"{op} {a.get(op)} -> {b.get(op)}" for op in differ))
    return "\n".join(lines)


PHASE_COLUMNS = ("start_imports", "collection", "autotune_sweep", "compilation",
                 "reference_timing", "operator_timing", "ir_dump", "teardown", "other")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="where each path's campaign and result go")
    p.add_argument("--path", choices=sorted(PATHS), action="append", default=[],
                   help="run this path (repeatable; default: both)")
    p.add_argument("--compare", action="store_true", help="only print the table of earlier runs")
    p.add_argument("screen_args", nargs=argparse.REMAINDER,
                   help="after --: the zl screen arguments both paths share")
    args = p.parse_args()
    screen_args = [a for a in args.screen_args if a != "--"]
    if not args.compare:
        for name in args.path or list(PATHS):
            r = run_path(args.out, name, screen_args)
            print(f"{name}: rc={r['rc']} {len(r['verdicts'])} operator(s) in {r['wall_s']:.0f} s")
    print(compare(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
