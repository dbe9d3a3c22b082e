"""The compile pool on real autotune sweeps: the same screen with ``--compile-workers 1``
and with N, side by side.

Each setting is one ``zl screen`` of the same operators, in its own campaign
(``--workers N``, repeatable; a device call ends at 600 s, so each can run in its own
call with results kept in ``--out``; ``--compare`` prints the table from what earlier
calls left there). Per operator and side the script reads the cell's identity (wall
time, the autotune-sweep and compilation phases, how many candidates the pool
compiled, whether it fell back), the picks side A recorded, and the TTGIR fingerprints
and verdicts of the report, and prints what the pool saved and whether anything a
verdict reads changed.

    python benchmarks/compile_pool.py --out DIR --workers 1 -- \
        --flaggems-dir FG --switch DISABLE_MMA_V3 --ops mm addmm bmm
    python benchmarks/compile_pool.py --out DIR --workers 8 -- (the same)
    python benchmarks/compile_pool.py --out DIR --compare
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

FALLBACK = "PARALLEL_COMPILE_FALLBACK"


def picks(cell: Path) -> dict[str, str]:
    """tuner file/key -> the config side A recorded (as canonical JSON)."""
    found = {}
    for path in sorted((cell / "autotune_records").glob("*.json")):
        if path.name == "meta.json":
            continue
        data = json.loads(path.read_text())
        for entry in data.get("entries", []):
            found[f"{path.stem}|{entry.get('key')}"] = json.dumps(entry.get("config"), sort_keys=True)
    return found


def cell_facts(cell: Path) -> dict:
    ident = json.loads((cell / "run_identity.json").read_text())
    seconds = (ident.get("phases") or {}).get("seconds") or {}
    log = "".join(p.read_text(errors="replace") for p in cell.glob("*.log"))
    return {"elapsed_s": ident.get("elapsed_s"), "rc": ident.get("rc"),
            "autotune_sweep": seconds.get("autotune_sweep"), "compilation": seconds.get("compilation"),
            "compile_workers": ident.get("compile_workers"),
            "parallel_compiles": ident.get("parallel_compiles"),
            "parallel_compile_off": ident.get("parallel_compile_off"),
            "fallback_lines": log.count(FALLBACK), "picks": picks(cell)}


def run_setting(out: Path, workers: int, screen_args: list[str]) -> dict:
    root = out / f"w{workers}"
    root.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "zl_core", "screen", *screen_args,
            "--compile-workers", str(workers), "--runs-root", str(root / "runs")]
    started = time.time()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.time() - started
    (root / "screen.log").write_text(proc.stdout + proc.stderr)
    campaign = max((root / "runs").glob("screen_*"))
    report = subprocess.run([sys.executable, "-m", "zl_core", "report", str(campaign), "--json",
                             "--allow-incomplete"], capture_output=True, text=True, check=False)
    model = json.loads(report.stdout)
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    result = {"workers": workers, "argv": argv[3:], "rc": proc.returncode, "wall_s": round(wall, 1),
              "campaign": str(campaign),
              "verdicts": {r["op"]: r["verdict"] for r in model["rows"]},
              "fingerprints": {r["op"]: [r.get("fingerprint_a", ""), r.get("fingerprint_b", "")]
                               for r in rows},
              "cells": {f"{p.parent.name}/{p.name}": cell_facts(p)
                        for p in sorted(campaign.glob("*/[AB]")) if (p / "run_identity.json").is_file()}}
    (root / "result.json").write_text(json.dumps(result, indent=1))
    return result


def _s(value) -> str:
    return "-" if value is None else f"{value:.1f} s"


def compare(out: Path) -> str:
    results = sorted((json.loads(p.read_text()) for p in out.glob("w*/result.json")),
                     key=lambda r: r["workers"])
    if not results:
        return f"no results under {out}"
    lines = ["| workers | cell | wall | autotune sweep | compilation | pool compiles | fallbacks |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        for key, c in sorted(r["cells"].items()):
            lines.append(f"| {r['workers']} | {key} | {_s(c['elapsed_s'])} | {_s(c['autotune_sweep'])} | "
                         f"{_s(c['compilation'])} | {c['parallel_compiles'] or 0} | "
                         f"{c['fallback_lines']}{' (' + c['parallel_compile_off'] + ')' if c.get('parallel_compile_off') else ''} |")
    lines.append("")
    base = results[0]
    for r in results:
        side_a = [c for k, c in r["cells"].items() if k.endswith("/A")]
        lines.append(f"workers {r['workers']}: screen {r['wall_s']:.0f} s (rc {r['rc']}); side A cells "
                     f"{sum(c['elapsed_s'] or 0 for c in side_a):.1f} s, their sweeps "
                     f"{sum(c['autotune_sweep'] or 0 for c in side_a):.1f} s and compilation "
                     f"{sum(c['compilation'] or 0 for c in side_a):.1f} s")
    for r in results[1:]:
        a, b = base["verdicts"], r["verdicts"]
        differ = sorted(op for op in set(a) | set(b) if a.get(op) != b.get(op))
        lines.append(f"workers {base['workers']} vs {r['workers']}: verdicts "
                     + ("identical" if not differ else
                        "differ: " + ", ".join(f"{op} {a.get(op)} -> {b.get(op)}" for op in differ)))
        fa, fb = base["fingerprints"], r["fingerprints"]
        other = sorted(op for op in fa if op in fb and fa[op] != fb[op])
        lines.append(f"  TTGIR fingerprints (A, B) equal for {sum(op in fb and fa[op] == fb[op] for op in fa)}"
                     f" operator(s)" + (f"; different for {', '.join(other)}" if other else ""))
        for key, cell in sorted(base["cells"].items()):
            if not key.endswith("/A") or key not in r["cells"]:
                continue
            pa, pb = cell["picks"], r["cells"][key]["picks"]
            same = sum(1 for k in pa if pb.get(k) == pa[k])
            lines.append(f"  {key}: {same} of {len(pa)} recorded picks the same"
                         + (f", {len(set(pa) ^ set(pb))} key(s) only on one side" if set(pa) != set(pb) else ""))
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="where each setting's campaign and result go")
    p.add_argument("--workers", type=int, action="append", default=[],
                   help="run the screen with this --compile-workers (repeatable; default 1 and 8)")
    p.add_argument("--compare", action="store_true", help="only print the table of earlier runs")
    p.add_argument("screen_args", nargs=argparse.REMAINDER,
                   help="after --: the zl screen arguments every setting shares")
    args = p.parse_args()
    screen_args = [a for a in args.screen_args if a != "--"]
    if not args.compare:
        for workers in args.workers or [1, 8]:
            r = run_setting(args.out, workers, screen_args)
            print(f"workers {workers}: rc={r['rc']} {len(r['verdicts'])} operator(s) in {r['wall_s']:.0f} s",
                  flush=True)
    print(compare(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
