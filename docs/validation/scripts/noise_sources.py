"""What moves a graph-timed latency between fresh processes, and what a replay budget buys.

Run on the device (after ``source .whl/on-device.sh``):

    python3 docs/validation/scripts/noise_sources.py --processes 6 --out $OUT/noise_sources.json

Each of ``--processes`` fresh Python processes imports torch, builds the cases' inputs and
times each case with zl's own graph timer (``zl_flaggems.cell.graph_timing.graph_replays``)
under every variant, in an order shuffled per process (so a variant's place in the
process is not confounded with it):

* ``old``: ten replays sharing do_bench's 100 ms (``replay_ms=10``, zl before this change);
* ``r30``, ``r100``, ``r300``: ten replays of 30, 100, 300 ms each;
* ``again``: ``old`` a second time in the same process (within-process repeatability);
* ``warm``: one second of back-to-back calls first (the clock ramp), then ``old``;
* ``fresh``: ``old`` on newly allocated inputs behind a random-sized spacer (placement).

The parent prints, per case and variant, the spread across processes (sd and range of
the medians, in percent), the median within-cell spread of the replays (range / median,
the figure zl's report shows as "within cell"), and the device milliseconds spent. The
same process's ``old`` vs ``again`` gives the within-process sd; what the spread across
processes adds beyond it is the process term no replay budget removes.

``--analyse FILE`` re-prints the tables of an earlier run and the budget choice: device
seconds per decided verdict are proportional to (cell cost) x (variance of a round's
delta), where a cell costs its fixed part plus its rows' timing at that budget.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time

CASES = {  # name: (kind, shape) with float16 inputs
    "relu_4096x4096": ("relu", (4096, 4096)),
    "relu_2^28": ("relu", (1024, 1024, 256)),
    "mm_4096": ("mm", (4096, 4096)),
    "relu_64x64": ("relu", (64, 64)),
}
VARIANTS = ("old", "r30", "r100", "r300", "again", "warm", "fresh")
REPLAY_MS = {"old": 10.0, "r30": 30.0, "r100": 100.0, "r300": 300.0, "again": 10.0,
             "warm": 10.0, "fresh": 10.0}


def child(index: int) -> dict:
    import torch
    from zl_flaggems.cell.graph_timing import graph_replays

    di = torch.cuda
    rng = random.Random(index)

    def inputs(kind, shape):
        if kind == "mm":
            return (torch.randn(shape, device="cuda", dtype=torch.float16),
                    torch.randn(shape, device="cuda", dtype=torch.float16))
        return (torch.randn(shape, device="cuda", dtype=torch.float16),)

    def op(kind, args):
        return (lambda: torch.mm(*args)) if kind == "mm" else (lambda: torch.relu(args[0]))

    out: dict = {"index": index, "pid": os.getpid(), "cases": {}}
    for case, (kind, shape) in CASES.items():
        args = inputs(kind, shape)
        order = list(VARIANTS)
        rng.shuffle(order)
        got = {}
        for variant in order:
            fn = op(kind, args)
            spacer = None
            if variant == "fresh":
                spacer = torch.empty(rng.randint(1, 64) << 20, dtype=torch.uint8, device="cuda")
                fn = op(kind, inputs(kind, shape))
            if variant == "warm":
                di.synchronize()
                t_end = time.perf_counter() + 1.0
                while time.perf_counter() < t_end:
                    for _ in range(20):
                        fn()
                    di.synchronize()
            t0 = time.perf_counter()
            timing = graph_replays(fn, di, warmup=25, replay_ms=REPLAY_MS[variant])
            wall = time.perf_counter() - t0
            got[variant] = {"median": timing.median_ms, "times": list(timing.times),
                            "calls": timing.calls_per_graph, "spread": timing.spread_pct,
                            "wall_s": wall}
            del spacer
        out["cases"][case] = {"order": order, **got}
    return out


def parent(processes: int, path: str) -> None:
    runs = []
    t0 = time.perf_counter()
    for i in range(processes):
        proc = subprocess.run([sys.executable, __file__, "--child", str(i)], capture_output=True,
                              text=True, timeout=300, check=False)
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not line:
            print(f"process {i} failed rc={proc.returncode}: {proc.stderr[-800:]}")
            continue
        runs.append(json.loads(line[-1]))
        print(f"process {i}: done at {time.perf_counter() - t0:.0f} s", flush=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"processes": runs}, fh)
    analyse(path)


def _sd_pct(values: list[float]) -> float:
    logs = [math.log(v) for v in values]
    return statistics.stdev(logs) * 100.0 if len(logs) > 1 else float("nan")


def _range_pct(times: list[float]) -> float:
    return (max(times) - min(times)) / statistics.median(times) * 100.0


def analyse(path: str, cell_fixed_s: float = 15.0, rows: int = 10) -> None:
    with open(path, encoding="utf-8") as fh:
        runs = json.load(fh)["processes"]
    print(f"{len(runs)} processes; per case and variant: spread of the medians across "
          "processes (sd, range), median within-cell spread of the replays, device ms")
    for case in CASES:
        print(f"\n{case}")
        print(f"  {'variant':8} {'median ms':>10} {'sd %':>7} {'not 1st':>8} {'range %':>8} "
              f"{'within %':>9} {'w/o 1st %':>9} {'1st +%':>7} {'device ms':>10}")
        sds = {}
        for variant in VARIANTS:
            got = [r["cases"][case][variant] for r in runs if case in r["cases"]]
            meds = [g["median"] for g in got]
            if len(meds) < 2:
                continue
            med = statistics.median(meds)
            sd = _sd_pct(meds)
            # A FlagGems row times torch's kernel before its own, so zl's number is never a
            # shape's first measurement in its process: the sd without those.
            later_meds = [r["cases"][case][variant]["median"] for r in runs
                          if case in r["cases"] and r["cases"][case]["order"][0] != variant]
            sd_later = _sd_pct(later_meds)
            sds[variant] = sd_later
            rng_pct = (max(meds) - min(meds)) / med * 100.0
            within = statistics.median(g["spread"] for g in got if g["spread"] is not None)
            # The first replay uploads the graph (3-10% slower on the H200): without it.
            later = statistics.median(_range_pct(g["times"][1:]) for g in got)
            first = statistics.median(g["times"][0] / statistics.median(g["times"][1:]) - 1
                                      for g in got) * 100.0
            device_ms = statistics.median(sum(g["times"]) * g["calls"] for g in got)
            print(f"  {variant:8} {med:10.5f} {sd:7.3f} {sd_later:8.3f} {rng_pct:8.3f} "
                  f"{within:9.3f} {later:9.3f} {first:7.2f} {device_ms:10.0f}")
        pairs = [(r["cases"][case]["old"]["median"], r["cases"][case]["again"]["median"])
                 for r in runs if case in r["cases"]]
        within_process = statistics.stdev(math.log(a / b) for a, b in pairs) / math.sqrt(2) * 100
        print(f"  same process, old vs again: sd {within_process:.3f}% "
              f"(across processes {_sd_pct([r['cases'][case]['old']['median'] for r in runs]):.3f}%)")
        first_place = [r["cases"][case][r["cases"][case]["order"][0]]["median"] for r in runs]
        later_place = [r["cases"][case][v]["median"] for r in runs
                       for v in r["cases"][case]["order"][1:] if v in ("old", "again", "r30", "r100", "r300")]
        print(f"  first measurement of the case in its process: median "
              f"{(statistics.median(first_place) / statistics.median(later_place) - 1) * 100:+.2f}% "
              "against the later ones")
        # Device seconds per decided verdict ~ cell cost x variance of a side.
        print(f"  cost per verdict from the 'not 1st' sd, relative to old (cell {cell_fixed_s:g} s"
              f" + {rows} rows x 2 calls of 11 replays):")
        base = None
        for variant in ("old", "r30", "r100", "r300"):
            if variant not in sds:
                continue
            cell = cell_fixed_s + rows * 2 * REPLAY_MS[variant] * 11 / 1000.0
            cost = cell * sds[variant] ** 2
            base = base or cost
            print(f"    {variant:5} cell {cell:5.1f} s  relative {cost / base:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", type=int)
    ap.add_argument("--processes", type=int, default=6)
    ap.add_argument("--out", default="noise_sources.json")
    ap.add_argument("--analyse")
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
    elif args.analyse:
        analyse(args.analyse)
    else:
        parent(args.processes, args.out)


if __name__ == "__main__":
    main()
