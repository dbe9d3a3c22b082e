"""Can a cell start from a process that already imported torch and flag_gems?

About half of a FlagGems cell's ~19 s on the H200 is importing torch and flag_gems
(docs/validation/2026-12-02-h200.md). A parent that imports them once and forks a
child per cell would save that, but only if the imports leave CUDA uninitialised:
CUDA does not survive a fork once the driver is initialised in the parent.

Run on the device (after ``source docs/validation/scripts/device_env.sh``):

    python3 docs/validation/scripts/fork_probe.py

It prints the import times, whether CUDA was initialised by the imports, and whether
a forked child can then run a kernel, time it with zl's graph timer and exit cleanly.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    t0 = time.perf_counter()
    import torch

    t1 = time.perf_counter()
    try:
        import flag_gems  # noqa: F401
        gems = "imported"
    except Exception as exc:  # noqa: BLE001
        gems = f"failed: {type(exc).__name__}: {exc}"
    t2 = time.perf_counter()
    print(f"import torch {t1 - t0:.2f} s, import flag_gems {t2 - t1:.2f} s ({gems})")
    print(f"after the imports: torch.cuda.is_initialized()={torch.cuda.is_initialized()}")
    sys.stdout.flush()
    for attempt in range(2):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                from zl_flaggems.graph_timing import graph_replays

                x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
                timing = graph_replays(lambda x=x: torch.relu(x), torch.cuda, replay_ms=30)
                print(f"child {attempt}: pid {os.getpid()}, relu 4096^2 {timing.median_ms * 1000:.2f} us, "
                      f"bad fork: {torch.cuda._is_in_bad_fork()}")
            except Exception as exc:  # noqa: BLE001
                print(f"child {attempt}: {type(exc).__name__}: {exc}")
                code = 1
            sys.stdout.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(f"child {attempt} exit status {os.waitstatus_to_exitcode(status)}")


if __name__ == "__main__":
    main()
