"""A fresh process's first Triton compile when the kernel is already in the on-disk cache,
with and without Triton's cache key computed before (zl_flaggems.cell.triton_prime).

Compiles two small kernels for sm90 (no device needed) in a new interpreter three times:
to fill a fresh cache, then from it, then from it with the key primed first; prints the
seconds of each compile and of the priming.

    python docs/validation/scripts/triton_first_compile.py [--repeat 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import os, sys, time
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
out = {}
if os.environ.get("PRIME") == "1":
    from zl_flaggems.cell import triton_prime
    out["prime"] = triton_prime.PRIMED_S

@triton.jit
def add(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

@triton.jit
def mul(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + i, tl.load(x + i, mask=i < n) * tl.load(y + i, mask=i < n), mask=i < n)

sig = {"x": "*fp16", "y": "*fp16", "o": "*fp16", "n": "i32", "BLOCK": "constexpr"}
for fn in (add, mul):
    t = time.perf_counter()
    triton.compile(ASTSource(fn, sig, constexprs={"BLOCK": 1024}), target=GPUTarget("cuda", 90, 32))
    out[fn.__name__] = time.perf_counter() - t
print(" ".join(f"{k}={v:.4f}" for k, v in out.items()))
'''


def run(cache: str, prime: bool) -> dict[str, float]:
    env = {**os.environ, "TRITON_CACHE_DIR": cache, "PRIME": "1" if prime else "0"}
    child = os.path.join(cache, "child.py")  # triton.jit reads its kernels' source from a file
    with open(child, "w", encoding="utf-8") as f:
        f.write(CHILD)
    line = subprocess.run([sys.executable, child], env=env, capture_output=True, text=True,
                          check=True).stdout.split()
    return {k: float(v) for k, v in (item.split("=") for item in line)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import triton

    print(f"Python {sys.version.split()[0]}, Triton {triton.__version__}")
    figures: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            for name, prime in (("empty cache", False), ("cached", False), ("cached, primed", True)):
                for kernel, seconds in run(cache, prime).items():
                    figures.setdefault(f"{name}: {kernel}", []).append(seconds)
    for name, values in figures.items():
        print(f"{name:<26} median {statistics.median(values):.3f} s  (min {min(values):.3f}, "
              f"max {max(values):.3f}, n={len(values)})")


if __name__ == "__main__":
    main()
