"""Lanes benchmark on a fake 4-GPU host (no device needed): wall time of a screen on
4 lanes against 1 lane, and what zl itself costs per cell.

Uses the test fakes (tests/fake_lanes: an nvidia-smi stand-in for 4 GPUs and the
'sleepy' suite whose cells sleep). Each cell sleeps SLEEP seconds, so a screen of N
operators has 2*N*SLEEP seconds of cell work; the rest of a 1-lane campaign's wall time
is zl's own cost (planning, the guard process, the device lock, identities, status
rows, IR summaries, the Python start-up of each cell process).
Usage: python docs/validation/scripts/lanes_benchmark.py [N_OPS] [SLEEP] [REPEATS]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FAKES = ROOT / "tests" / "fake_lanes"


def screen(runs: Path, ops: list[str], devices: str, sleep: float) -> tuple[float, Path]:
    env = dict(os.environ, PATH=f"{FAKES / 'bin'}{os.pathsep}{os.environ['PATH']}", ZL_BACKEND="cuda",
               ZL_RUNS_ROOT=str(runs), ZL_FAKE_SLEEP=str(sleep), ZL_LOCK_DIR=str(runs / "locks"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(FAKES / "zl_fake_lanes.py"), "screen", "--suite", "sleepy",
                           "--switch", "FAKE_SWITCH", "--ops", *ops, "--devices", devices],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"screen failed ({proc.returncode}): {proc.stderr.strip()}")
    campaign = max(runs.glob("screen_*"), key=lambda p: p.stat().st_mtime)
    return wall, campaign


def cell_seconds(campaign: Path) -> float:
    return sum(json.loads(p.read_text())["elapsed_s"] for p in campaign.glob("*/[AB]/run_identity.json"))


def main() -> None:
    n_ops = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    ops = [f"op{i:02d}" for i in range(n_ops)]
    cells = 2 * n_ops
    one, four, overhead, overhead_cells = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="zl-lanes-bench-") as tmp:
        for r in range(repeats):
            wall1, camp1 = screen(Path(tmp) / f"one{r}", ops, "0", sleep)
            wall4, _ = screen(Path(tmp) / f"four{r}", ops, "all", sleep)
            one.append(wall1)
            four.append(wall4)
            overhead.append((wall1 - cells * sleep) / cells)
            overhead_cells.append((wall1 - cell_seconds(camp1)) / cells)
    ratio = statistics.median(w4 / w1 for w1, w4 in zip(one, four, strict=True))
    print(f"fake 4-GPU host, {n_ops} operators ({cells} cells of {sleep:g} s), {repeats} repeats")
    print(f"wall, 1 lane:  median {statistics.median(one):.2f} s  ({', '.join(f'{w:.2f}' for w in one)})")
    print(f"wall, 4 lanes: median {statistics.median(four):.2f} s  ({', '.join(f'{w:.2f}' for w in four)})")
    print(f"4 lanes / 1 lane: {ratio:.3f}x (ideal 0.25x)")
    print(f"zl cost per cell beyond the cell's sleep: median {statistics.median(overhead):.3f} s "
          "(includes each cell process's Python start-up)")
    print(f"zl cost per cell beyond the cells' own elapsed time: median "
          f"{statistics.median(overhead_cells):.3f} s")


if __name__ == "__main__":
    main()
