"""What the TTGIR recorder's launch hook costs on this host, per call.

Triton calls the launch hook chain on every launch, so the recorder adds one Python
call to each; a validation run puts a number on it (the ttgir plugin records it).
"""

from __future__ import annotations

import time
from typing import Any

from zl_flaggems.cell.ttgir_recorder import TtgirRecorder


class _FakeLaunchMetadata:
    __slots__ = ("data",)

    def __init__(self, function: Any):
        self.data = {"name": "probe", "function": function, "stream": 0}


def measure_hook_cost(calls: int = 7000, repeats: int = 3) -> float:
    """Nanoseconds one launch-hook call costs on this host (on a scratch recorder).

    The fastest of ``repeats`` timed loops, less the fastest empty loop: on a
    busy host a single pair of loops can come out the wrong way round.
    """
    scratch = TtgirRecorder()
    hook = scratch.launch_hook
    metadata = _FakeLaunchMetadata(12345)
    for _ in range(min(calls, 1000)):
        hook(metadata)
    loop = empty = None
    for _ in range(repeats):
        started = time.perf_counter_ns()
        for _ in range(calls):
            hook(metadata)
        took = time.perf_counter_ns() - started
        loop = took if loop is None else min(loop, took)
        started = time.perf_counter_ns()
        for _ in range(calls):
            pass
        took = time.perf_counter_ns() - started
        empty = took if empty is None else min(empty, took)
    return max(0.0, ((loop or 0) - (empty or 0)) / max(calls, 1))
