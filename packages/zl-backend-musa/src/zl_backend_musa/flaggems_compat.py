"""A pytest plugin that lifts stale CUDA-only skip guards from FlagGems benchmarks on MUSA.

Some upstream benchmarks gate themselves on ``torch.cuda.is_available()`` although the
code under test dispatches through ``flag_gems.device`` to whichever accelerator
FlagGems picked. On Moore Threads those guards skip an operator that runs, and zl
would report it as not measured.

Each override is pinned to one benchmark file, one exact skip reason and, where the
guard is stale for one test only, that test; it applies only when the FlagGems package
the benchmark imported dispatches to the ``mthreads`` vendor. Both were observed to
pass on an S5000 with the guard removed. Two guards were probed there and are kept
on purpose, because they are not stale:

* ``test_cutlass_scaled_mm.py`` gates on vLLM as well as CUDA: removing the guard
  raises on the missing dependency instead of measuring anything.
* ``test_grid_sample.py`` builds inputs through a helper whose device defaults to the
  literal ``"cuda"``: unskipped, every case fails in ``aten::empty``.

Loaded by the MUSA backend's ``zl_compat_plugins`` hook, before zl's own plugins, in
benchmark cells and in a sealed campaign's accuracy-test cells alike (a guard is matched
by file name: FlagGems' tests/test_top_k_per_row_decode.py carries the benchmark's); it
imports nothing but the standard library until pytest calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The vendor name FlagGems gives Moore Threads (runtime/backend/_mthreads).
VENDOR = "mthreads"
#: The packages a FlagGems benchmark may dispatch through (FlagGems, FlagGems-vllm).
GEMS_PACKAGES = ("flag_gems", "flaggems_vllm")
TAG = "zl musa-compat"


@dataclass(frozen=True)
class StaleGuard:
    """One ``skipif`` that is stale on MUSA: its file, its exact reason, maybe one test."""

    file: str
    reason: str
    test: str | None = None  # None: every test of the file

    def matches(self, file_name: str, test_name: str, mark: Any, *, on_item: bool = True) -> bool:
        """Whether ``mark`` is this guard; a guard pinned to one test matches only on
        that test's own node, never on a class or module it shares with others."""
        if self.test is not None and not on_item:
            return False
        if getattr(mark, "name", None) != "skipif" or file_name != self.file:
            return False
        if (getattr(mark, "kwargs", None) or {}).get("reason") != self.reason:
            return False
        return self.test is None or _function(test_name) == self.test


#: Verified on an S5000: unskipped, these pass.
STALE_GUARDS: tuple[StaleGuard, ...] = (
    StaleGuard("test_fft.py", "CUDA is not available", test="test_perf_fft"),
    StaleGuard("test_top_k_per_row_decode.py", "CUDA device required"),
)


def _function(test_name: str) -> str:
    """``test_perf_fft[float32]`` -> ``test_perf_fft``."""
    return test_name.partition("[")[0]


def is_stale(file_name: str, test_name: str, mark: Any,
             guards: Iterable[StaleGuard] = STALE_GUARDS, *, on_item: bool = True) -> bool:
    return any(g.matches(file_name, test_name, mark, on_item=on_item) for g in guards)


def dispatch_vendor() -> str | None:
    """The vendor of the FlagGems package the benchmarks imported, None if none is."""
    for name in GEMS_PACKAGES:
        package = sys.modules.get(name)
        vendor = getattr(package, "vendor_name", None) if package is not None else None
        if vendor:
            return str(vendor)
    return None


def lift_stale_guards(items: Iterable[Any],
                      guards: Iterable[StaleGuard] = STALE_GUARDS) -> dict[str, int]:
    """Drop the stale guards of ``items``; the count removed per file.

    A guard can sit on the test function, its class or the module's ``pytestmark``;
    pytest resolves ``skipif`` over that whole chain, so every level is cleaned, each
    node once.
    """
    guards = tuple(guards)
    removed: dict[str, int] = {}
    seen: set[int] = set()
    for item in items:
        file_name = Path(str(getattr(item, "path", ""))).name
        for node in item.listchain():
            markers = getattr(node, "own_markers", None)
            if id(node) in seen or not markers:
                continue
            seen.add(id(node))
            on_item = node is item
            kept = [m for m in markers
                    if not is_stale(file_name, item.name, m, guards, on_item=on_item)]
            if len(kept) != len(markers):
                removed[file_name] = removed.get(file_name, 0) + len(markers) - len(kept)
                markers[:] = kept
    return removed


def pytest_collection_modifyitems(session, config, items) -> None:
    vendor = dispatch_vendor()
    if vendor != VENDOR:
        return
    removed = lift_stale_guards(items)
    total = sum(removed.values())
    detail = ", ".join(f"{n} from {f}" for f, n in sorted(removed.items())) or "none matched"
    print(f"[{TAG}] removed {total} stale CUDA-only skip guard(s): {detail}",
          file=sys.stderr, flush=True)
