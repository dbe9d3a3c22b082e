"""Can a cell start from a process that already imported torch, triton and flag_gems?

About half of a FlagGems cell's time on the H200 is the interpreter's start and its
imports (docs/validation/2026-12-04-h200-throughput.md). A parent that imports them once
and forks a child per cell would save that, but only if

* the imports leave the driver untouched: CUDA does not survive a fork once the driver
  is initialised in the parent (torch's flag, and whether libcuda is mapped at all);
* what the imports read from the environment does not differ between cells (the
  variables read while importing are recorded here, Python-level reads only).

Run on the device (after ``source .whl/on-device.sh``), with FLAGGEMS_DIR set:

    python3 docs/validation/scripts/fork_probe.py [--gems-vendor nvidia]

It prints one JSON object: each import's seconds, the driver's state after it, the
variables read, and what a forked child could do (run a flag_gems kernel, exit), and the
cost of an ordinary interpreter exit against ``os._exit`` after CUDA work.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

READS: list[str] = []


class _RecordingEnviron(type(os.environ)):
    """os.environ that remembers which names were asked for."""

    def __getitem__(self, key):
        READS.append(str(key))
        return super().__getitem__(key)

    def __contains__(self, key):
        READS.append(str(key))
        return super().__contains__(key)


def _driver_mapped() -> bool:
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return "libcuda.so" in maps.read()


def _import(name: str) -> dict:
    start = len(READS)
    t0 = time.perf_counter()
    try:
        __import__(name)
        error = None
    except Exception as exc:  # noqa: BLE001 - reported, the probe goes on
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - t0
    torch = sys.modules.get("torch")
    return {"module": name, "seconds": round(seconds, 3), "error": error,
            "torch_cuda_initialized": bool(torch and torch.cuda.is_initialized()),
            "libcuda_mapped": _driver_mapped(), "env_read": sorted(set(READS[start:]))}


def _child_work() -> dict:
    import torch

    out: dict = {"pid": os.getpid()}
    t0 = time.perf_counter()
    x = torch.randn(1 << 20, device="cuda", dtype=torch.float16)
    out["first_cuda_s"] = round(time.perf_counter() - t0, 3)
    if "flag_gems" in sys.modules:
        import flag_gems

        t0 = time.perf_counter()
        with flag_gems.use_gems():
            y = torch.abs(x)
        torch.cuda.synchronize()
        out["flag_gems_abs_s"] = round(time.perf_counter() - t0, 3)
        out["abs_ok"] = bool(torch.equal(y, x.abs()))
    out["bad_fork"] = bool(torch.cuda._is_in_bad_fork())
    return out


def _fork_child(results: list) -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            payload = _child_work()
        except Exception as exc:  # noqa: BLE001
            payload = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(payload).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    payload = json.loads(b"".join(chunks) or b"{}")
    payload["exit"] = os.waitstatus_to_exitcode(status)
    results.append(payload)


_EXIT_SCRIPT = """
import os, sys, time, torch
import flag_gems
x = torch.randn(1 << 20, device="cuda", dtype=torch.float16)
with flag_gems.use_gems():
    torch.abs(x)
torch.cuda.synchronize()
sys.stdout.write(repr(time.time())); sys.stdout.flush()
if sys.argv[1] == "fast":
    os._exit(0)
"""


def _exit_cost(how: str) -> float:
    proc = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, how], capture_output=True, text=True,
                          check=False)
    ended = time.time()
    try:
        return round(ended - float(proc.stdout.strip().splitlines()[-1]), 3)
    except (ValueError, IndexError):
        return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gems-vendor", default="")
    parser.add_argument("--modules", nargs="*", default=["torch", "triton", "pytest", "flag_gems"])
    args = parser.parse_args()
    if args.gems_vendor:
        os.environ["GEMS_VENDOR"] = args.gems_vendor
    t0 = time.perf_counter()
    os.environ.__class__ = _RecordingEnviron
    report = {"python": sys.version.split()[0], "gems_vendor": args.gems_vendor, "imports": []}
    for name in args.modules:
        report["imports"].append(_import(name))
    report["imports_total_s"] = round(time.perf_counter() - t0, 3)
    children: list = []
    for _ in range(2):
        _fork_child(children)
    report["forked_children"] = children
    report["exit_cost_s"] = {"normal": _exit_cost("normal"), "os._exit": _exit_cost("fast")}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
