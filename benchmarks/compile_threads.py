"""Does Triton compile in parallel on threads? The builtin suite's kernels, compiled for
sm90 (no device needed) on 1 thread and on N, as the compile pool would.

    python benchmarks/compile_threads.py [--threads N] [--repeat R]

Prints the seconds of each pass and whether every pass produced the same TTGIR. On a
two-core machine, four passes each: 23 variants in 3.99-4.48 s on one thread, 1.96-2.31 s on
two, the same TTGIR every time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--ops", nargs="+", default=["mm", "softmax", "layer_norm", "add"])
    args = p.parse_args()
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="zl-compile-threads-")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"  # every pass compiles, none reads the cache
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from zl_flaggems.cell.compile_only import select_specs

    specs = [s for op in args.ops for s in select_specs(op, [])]
    target = GPUTarget("cuda", 90, 32)

    def one(spec) -> str:
        src = ASTSource(fn=spec.kernel, signature=dict(spec.signature),
                        constexprs=dict(spec.constexprs), attrs=spec.attrs())
        return triton.compile(src, target=target, options=dict(spec.options)).asm["ttgir"]

    digests = set()
    print(f"{len(specs)} variants of {', '.join(args.ops)}; triton {triton.__version__}; "
          f"{os.cpu_count()} cores")
    for _ in range(args.repeat):
        for threads in (1, args.threads):
            start = time.perf_counter()
            if threads == 1:
                out = [one(s) for s in specs]
            else:
                with ThreadPoolExecutor(threads) as pool:
                    out = list(pool.map(one, specs))
            seconds = time.perf_counter() - start
            digests.add(hashlib.sha256("\0".join(out).encode()).hexdigest())
            print(f"{threads} thread(s): {seconds:.2f} s")
    print("same TTGIR on every pass" if len(digests) == 1 else "TTGIR differed between passes")


if __name__ == "__main__":
    main()
