"""What binding the compiler build costs: the digest of the Triton this interpreter imports.

    python benchmarks/compiler_digest.py            # the figures in docs/caliber.md
    python benchmarks/compiler_digest.py --cells 50

Prints the installed package's size, then the seconds of: the first digest (every byte
read, the cache filled; what the first cell of a machine pays), the digest with every
byte read (what ``zl freeze`` and a frozen run's checks pay), a cell's digest with the
cache (every file's ``stat``; what each further cell pays), and finding where a cell's
interpreter imports it (one interpreter start, once per campaign). The cache lives in a
fresh temporary folder, so the first figure is a cold cache's.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time


def _timed(call, times: int) -> list[float]:
    out = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/compiler_digest.py")
    parser.add_argument("--module", default="triton", help="the compiler module (default triton)")
    parser.add_argument("--cells", type=int, default=20, help="cached digests to time")
    args = parser.parse_args(argv)
    os.environ["ZL_CACHE_DIR"] = tempfile.mkdtemp(prefix="zl-digest-")
    from zl_core.foundation import compiler_build

    spec = importlib.util.find_spec(args.module)
    if spec is None or spec.origin is None:
        print(f"{sys.executable} cannot import {args.module}")
        return 1
    root = compiler_build.package_root(spec.origin)
    [first] = _timed(lambda: compiler_build.build_of(args.module, spec.origin), 1)
    build = compiler_build.build_of(args.module, spec.origin)
    size = sum(os.path.getsize(root / rel) for rel in build.files)
    print(f"{args.module} {build.version} at {root}: {len(build.files)} files, {size / 1e6:.0f} MB, "
          f"sha256 {build.digest[:16]}, commit {build.commit}")
    full = _timed(lambda: compiler_build.build_of(args.module, spec.origin, cached=False), 3)
    cells = _timed(lambda: compiler_build.cell_builds(sys.executable, (args.module,), os.environ, None),
                   args.cells)
    where = _timed(lambda: compiler_build.origins(sys.executable, [args.module]), 3)
    print(f"first digest (cold cache): {first:.2f} s")
    print(f"every byte read: {min(full):.2f}-{max(full):.2f} s")
    print(f"a cell, cached: median {statistics.median(cells[1:] or cells) * 1000:.1f} ms, "
          f"max {max(cells[1:] or cells) * 1000:.1f} ms over {len(cells)} cells")
    print(f"where the interpreter imports it: {min(where) * 1000:.0f}-{max(where) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
