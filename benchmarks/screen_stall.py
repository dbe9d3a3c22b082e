"""A pytest plugin for benchmarks/screen_throughput.py: one operator's benchmark hangs.

A FlagGems benchmark that never finishes (the bfloat16 case of one operator did, in plain
pytest without zl) is what a stall window is for; which operator does it depends on the
checkout, so the benchmark makes one hang on purpose. With ``ZL_BENCH_STALL_OP`` naming
the cell's operator (``ZL_OP``), every test of the cell sleeps in its main thread, silent,
printing and compiling nothing: the cell process is alive and makes no progress.
"""

from __future__ import annotations

import os
import time


def pytest_runtest_call(item) -> None:
    wanted = os.environ.get("ZL_BENCH_STALL_OP")
    if wanted and os.environ.get("ZL_OP") == wanted:
        time.sleep(10**6)
