"""pytest plugin: an autotune sweep's candidate configs compiled in parallel before they are timed.

Inert unless ``ZL_COMPILE_WORKERS`` is 2 or more (``--compile-workers``). Where a tuner
(Triton's ``Autotuner``, FlagGems' ``LibTuner``) is about to benchmark a new key, it
first asks ``self.prune_configs(kwargs)`` for the candidates. This plugin wraps that
call: with the candidates known, each is compiled (``fn.run(..., warmup=True)``: compile,
never launch) under Triton's ``AsyncCompileMode`` on a pool of threads, so the compiles
overlap (Triton's compiler releases the GIL: 23 builtin variants took 4.0-4.5 s on one
thread and 2.0-2.3 s on two of a two-core machine, benchmarks/compile_threads.py). The tuner
then benchmarks serially, as before, and finds each kernel compiled.

Nothing a verdict reads changes: the same compiler makes the same kernels (the TTGIR
recorder sees every compile, from the worker threads), the timing is the tuner's own,
one candidate after the other, and the recorded picks keep their format. A candidate
that fails to compile in the pool is simply compiled again by the serial sweep, which
handles its error as it always did. Anything else going wrong in the pool (a Triton
without ``AsyncCompileMode``, a pool that cannot start, an error outside compilation)
discards the parallel compile, prints ``PARALLEL_COMPILE_FALLBACK kernel=<name>
reason=<why>`` and the sweep compiles serially; after such a failure the pool stays off
for the rest of the cell.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from zl_core.interface import contract, phases

from zl_flaggems.cell import cellenv, markers, phase_clock

PLUGIN = "compile_pool"
FALLBACK = contract.PARALLEL_COMPILE_FALLBACK

_state: dict[str, Any] = {"pool": None, "workers": 1, "off": "", "batches": 0, "compiled": 0}
_undo: list[Any] = []


def workers() -> int:
    return cellenv.env_int(contract.COMPILE_WORKERS, 1, minimum=1)


def _positional(tuner: Any) -> tuple:
    """The launch's positional arguments (LibTuner keeps them; Triton's tuner has nargs)."""
    kept = getattr(tuner, "_last_benchmark_args", None)
    if kept is not None:
        return tuple(kept)
    nargs = getattr(tuner, "nargs", None) or {}
    return tuple(nargs[name] for name in list(tuner.arg_names)[:len(nargs)])


def _name(tuner: Any) -> str:
    fn = getattr(tuner, "base_fn", None) or getattr(tuner, "fn", None)
    return str(getattr(fn, "__name__", None) or getattr(fn, "name", None) or "kernel")


def _fallback(tuner: Any, why: str) -> None:
    _state["off"] = why
    markers.emit(FALLBACK, ("kernel", _name(tuner)), ("reason", why))


def precompile(tuner: Any, configs: list, kwargs: dict, *, async_mode: Any) -> int:
    """Compile every candidate of ``configs`` on the pool; the number submitted.

    Raises only for what is not one candidate's compile error (then the caller falls
    back); a candidate whose options clash with the launch's is left to the sweep."""
    args = _positional(tuner)
    submitted = 0
    with phase_clock.phase(phases.COMPILATION), async_mode(_state["pool"], ignore_errors=True):
        for config in configs:
            if set(config.kwargs) & set(kwargs):
                continue  # the sweep raises its own error for the clash
            tuner.fn.run(*args, **{**kwargs, **config.all_kwargs(), "warmup": True})
            submitted += 1
    phase_clock.progress()
    return submitted


def _install() -> str:
    """Wrap ``Autotuner.prune_configs``; "" or why the pool cannot go in."""
    try:
        from triton.runtime import _async_compile
        from triton.runtime.autotuner import Autotuner
    except Exception as exc:  # noqa: BLE001 - an older Triton: the sweep stays serial
        return f"this Triton has no AsyncCompileMode ({type(exc).__name__})"
    original = Autotuner.__dict__.get("prune_configs")
    if original is None:
        return "this Triton's Autotuner has no prune_configs"

    def prune_configs(self: Any, kwargs: dict, *rest: Any, **more: Any) -> Any:
        configs = original(self, kwargs, *rest, **more)
        if _state["off"] or len(configs) < 2 or _async_compile.active_mode.get() is not None:
            return configs
        try:
            _state["compiled"] += precompile(self, list(configs), dict(kwargs),
                                             async_mode=_async_compile.AsyncCompileMode)
            _state["batches"] += 1
        except Exception as exc:  # noqa: BLE001 - the serial sweep compiles whatever is missing
            _fallback(self, f"{type(exc).__name__}: {exc}")
        return configs

    prune_configs.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps sets it
    Autotuner.prune_configs = prune_configs

    def undo() -> None:
        if Autotuner.__dict__.get("prune_configs") is prune_configs:
            Autotuner.prune_configs = original

    _undo.append(undo)
    return ""


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    count = workers()
    if count < 2 or not os.environ.get(contract.CELL_DIR):
        return
    why = _install()
    if why:
        _state["off"] = why
        markers.emit(FALLBACK, ("kernel", "-"), ("reason", why))
        return
    _state.update(workers=count, pool=ThreadPoolExecutor(count, thread_name_prefix="zl-compile"))


def pytest_unconfigure(config: pytest.Config) -> None:
    pool = _state.get("pool")
    if pool is not None:
        pool.shutdown(wait=True)
        _state["pool"] = None
        cellenv.merge_identity(PLUGIN, {"compile_workers": _state["workers"],
                                        "parallel_compiles": _state["compiled"],
                                        "parallel_compile_batches": _state["batches"],
                                        # compile seconds the workers did, overlapped; the
                                        # cell's compilation phase holds the wall time
                                        "parallel_compile_work_s": round(
                                            phase_clock.CLOCK.off_thread.get(phases.COMPILATION, 0.0), 3),
                                        **({"parallel_compile_off": _state["off"]} if _state["off"] else {})})
    while _undo:
        _undo.pop()()
