"""What Triton computes once per process on its first compile, computed before a cell
holds its device.

Triton keys its cache by a hash of its own sources and of libtriton (a 415 MB library in
Triton 3.6), computed on a process's first compile, a cache hit included, and kept for
the process's life. In a fresh process with the kernel in its on-disk cache the first
compile took 0.29 s here, 0.008 s with the hash computed before
(docs/validation/2026-12-08-triton-prime.md): a later round's cell, whose kernels its
side's compile cache holds, spends most of its compilation on it, and a pipelined cell
spends it holding its device's timing gate.

Importing this module computes it: the warm parent imports it after triton
(:data:`zl_flaggems.common.gems_env.WARM_MODULES`), so every forked cell inherits the
hash; a cold cell calls :func:`prime` when its collection ends, before its first test
takes the gate. The hash is the one the compile would compute (the same function, its
own memo), so nothing a compile produces changes.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

#: Where Triton keeps the function (3.1 and later; 3.0 had it in the compiler module).
_HOMES = ("triton.runtime.cache", "triton.compiler.compiler")


def _key_function() -> Callable[[], str] | None:
    for home in _HOMES:
        try:
            module = importlib.import_module(home)
        except Exception:  # noqa: BLE001 - no Triton, or not this layout: nothing to prime
            continue
        key = getattr(module, "triton_key", None)
        if callable(key) and callable(getattr(key, "cache_info", None)):  # memoised: worth priming
            return key
    return None


def prime() -> float | None:
    """Compute Triton's cache key in this process unless it is already known; the seconds
    it took (0.0 when inherited or done before), None where this Triton has none to prime."""
    key = _key_function()
    if key is None:
        return None
    started = time.perf_counter()
    try:
        key()
    except Exception:  # noqa: BLE001 - the first compile will meet (and report) the same error
        return None
    return time.perf_counter() - started


PRIMED_S = prime()
