"""What flushing the L2 cache between graph-timed calls changes, in one process.

For FlagGems' relu and mm (float16) at shapes inside and beyond the card's L2, each
measured ``--reps`` times in turn: zl's graph timer with a warm cache
(``graph_replays(fn, di)``) and with the cache flushed before every call and the flush
subtracted (``graph_replays(fn, di, flush=...)``, the cell's ``--l2 flush``), beside
Triton's ``do_bench`` (direct, flushes before every call) and ``do_bench_cudagraph``
(graph, warm). One JSON line per measurement on stdout, a summary table on stderr.

    python3 l2_direct.py --reps 4 --replay-ms 30 > l2_direct.jsonl

Needs a device, torch, triton, FlagGems (``flag_gems``) and zl_flaggems.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

RELU = [(64, 64), (1 << 20,), (1 << 22,), (4096, 4096), (1 << 28,)]
MM = [384, 1024, 2048, 4096]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=4)
    p.add_argument("--replay-ms", type=float, default=30.0)
    args = p.parse_args()

    import torch
    import triton
    import triton.testing as tt
    from zl_flaggems.cell.graph_timing import graph_replays

    import flag_gems

    di = torch.cuda
    props = torch.cuda.get_device_properties(0)
    driver = triton.runtime.driver.active
    buffer = driver.get_empty_cache_for_benchmark()

    def flush():
        driver.clear_cache(buffer)

    head = {"kind": "device", "name": props.name, "l2_bytes": getattr(props, "L2_cache_size", None),
            "flush_bytes": buffer.numel() * buffer.element_size(), "torch": torch.__version__,
            "triton": triton.__version__, "reps": args.reps, "replay_ms": args.replay_ms}
    print(json.dumps(head), flush=True)

    cases = []
    for shape in RELU:
        x = torch.randn(shape, dtype=torch.float16, device="cuda")
        cases.append(("relu", "x".join(map(str, shape)), x.numel() * 2 * 2, lambda x=x: flag_gems.relu(x)))
    for n in MM:
        a = torch.randn((n, n), dtype=torch.float16, device="cuda")
        b = torch.randn((n, n), dtype=torch.float16, device="cuda")
        cases.append(("mm", f"{n}x{n}x{n}", 3 * n * n * 2, lambda a=a, b=b: flag_gems.mm(a, b)))

    rows = []
    for op, shape, nbytes, fn in cases:
        t0 = time.time()
        fn()  # compiles, and tunes mm once: both modes then time the same config
        torch.cuda.synchronize()
        for rep in range(args.reps):
            order = ("warm", "flush") if rep % 2 == 0 else ("flush", "warm")
            got = {}
            for mode in order:
                timing = graph_replays(fn, di, warmup=25, replay_ms=args.replay_ms,
                                       flush=flush if mode == "flush" else None)
                got[mode] = timing
            direct = tt.do_bench(fn, warmup=25, rep=100, return_mode="median")
            cudagraph = tt.do_bench_cudagraph(fn, rep=100, return_mode="median")
            for mode in ("warm", "flush"):
                t = got[mode]
                row = {"kind": "graph", "op": op, "shape": shape, "bytes": nbytes, "rep": rep,
                       "mode": mode, "median_ms": t.median_ms, "spread_pct": t.spread_pct,
                       "calls_per_graph": t.calls_per_graph, "replays": len(t.times),
                       "flush_ms": t.flush_ms, "times": list(t.times)}
                rows.append(row)
                print(json.dumps(row), flush=True)
            for kind, value in (("do_bench", direct), ("do_bench_cudagraph", cudagraph)):
                row = {"kind": kind, "op": op, "shape": shape, "bytes": nbytes, "rep": rep,
                       "median_ms": float(value)}
                rows.append(row)
                print(json.dumps(row), flush=True)
        print(f"# {op} {shape}: {time.time() - t0:.1f} s", file=sys.stderr, flush=True)

    print(f"{'op':5} {'shape':16} {'MB':>7} {'warm ms':>10} {'flush ms':>10} {'flush/warm':>10} "
          f"{'sd warm%':>8} {'sd flush%':>9} {'do_bench':>10} {'cudagraph':>10} {'1 flush ms':>10}",
          file=sys.stderr)
    for op, shape, nbytes, _ in cases:
        def of(kind, mode=None, op=op, shape=shape):
            return [r for r in rows if r["op"] == op and r["shape"] == shape and r["kind"] == kind
                    and (mode is None or r.get("mode") == mode)]
        warm = [r["median_ms"] for r in of("graph", "warm")]
        fl = [r["median_ms"] for r in of("graph", "flush")]
        fms = [r["flush_ms"] for r in of("graph", "flush")]
        w, f = statistics.median(warm), statistics.median(fl)
        sdw = statistics.stdev(warm) / w * 100 if len(warm) > 1 else float("nan")
        sdf = statistics.stdev(fl) / f * 100 if len(fl) > 1 else float("nan")
        db = statistics.median(r["median_ms"] for r in of("do_bench"))
        cg = statistics.median(r["median_ms"] for r in of("do_bench_cudagraph"))
        print(f"{op:5} {shape:16} {nbytes / 1e6:7.1f} {w:10.5f} {f:10.5f} {f / w:10.3f} {sdw:8.2f} "
              f"{sdf:9.2f} {db:10.5f} {cg:10.5f} {statistics.median(fms):10.5f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
