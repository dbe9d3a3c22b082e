"""pytest plugin: where the cell's time goes, phase by phase (:mod:`zl_core.interface.phases`).

Loaded first, so its clock (:mod:`zl_flaggems.cell.phase_clock`) starts before the other
plugins and the benchmark's conftest import anything. What marks each phase:

* interpreter start and imports: up to the start of collection, plus the import of
  each test module during collection (FlagGems' test files import torch and
  flag_gems there, the most expensive imports of a cell);
* collection: ``pytest_collection``, less those imports;
* autotune sweep: Triton's ``Autotuner._bench`` (one candidate config benchmarked);
* compilation: the durations Triton's compilation listener reports, taken out of
  whichever phase the compile ran in, and Triton's per-process cache key, computed when
  collection ends (:mod:`zl_flaggems.cell.triton_prime`, inherited from a warm parent);
* reference and operator timing: the benchmark class's ``get_latency``. FlagGems
  times the torch reference first and its own kernel last within a row (and may
  time both through ``torch_op`` under ``use_gems``), so the last call of a row is
  the operator's and any earlier call the reference's;
* IR dump: the TTGIR plugin's writes (it marks them itself);
* when the device was held for timing (the sweep's benchmarks and the timing calls,
  compilations cut out): the clock's own record, kept while both hooks are in;
* teardown: from the first ``pytest_sessionfinish`` to the last ``pytest_unconfigure``.

Each candidate benchmarked, kernel compiled, timing call returned and test finished is
also a progress beat (:mod:`zl_core.cells.liveness`): a cell busy in a long autotune sweep
prints nothing for minutes, and must not look stalled.

A hook that cannot go in (no Triton, no compilation listener, no ``get_latency``)
leaves its phase out of :data:`~zl_flaggems.cell.phase_clock.MEASURED`, so the record
says unknown. The record is written after collection, after each test and at the end
(``final``), so a cell killed midway keeps what it had measured.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import pytest
from zl_core.interface import contract, phases

from zl_flaggems.cell import benchapi, cellenv, phase_clock
from zl_flaggems.cell.rowclock import CLOCK as ROWS

PLUGIN = "phases"
_TIMING = phases.TIMING  # a get_latency call, until its row says whose it was

_undo: list[Any] = []
_calls: list[tuple[int, float]] = []  # (row, own seconds) of each get_latency call
_resolved = 0  # calls before this index are already split into reference/operator
_depth = 0  # get_latency calling get_latency (a subclass through super()) counts once


# -- the hooks that go into Triton -------------------------------------------------------


def _install_sweep() -> None:
    phase_clock.DEVICE_HOOKS["sweep"] = False
    try:
        from triton.runtime.autotuner import Autotuner
    except Exception:  # noqa: BLE001 - no Triton: the sweep stays unknown
        return
    original = Autotuner.__dict__.get("_bench")
    if original is None:
        return

    def _bench(self: Any, *args: Any, **kwargs: Any) -> Any:
        phase_clock.progress()
        with phase_clock.phase(phases.AUTOTUNE):
            return original(self, *args, **kwargs)

    _bench.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps sets it
    Autotuner._bench = _bench
    phase_clock.MEASURED.add(phases.AUTOTUNE)
    phase_clock.DEVICE_HOOKS["sweep"] = True

    def undo() -> None:
        if Autotuner.__dict__.get("_bench") is _bench:
            Autotuner._bench = original

    _undo.append(undo)


def _compile_seconds(times: Any) -> float:
    total = getattr(times, "total", None)  # CompileTimes, microseconds
    return float(total) / 1e6 if isinstance(total, (int, float)) else 0.0


def _install_listener() -> None:
    try:
        from triton import knobs
    except Exception:  # noqa: BLE001 - Triton < 3.4: compilation stays unknown
        return
    compilation = getattr(knobs, "compilation", None)
    if compilation is None or not hasattr(compilation, "listener"):
        return
    previous = compilation.listener

    def zl_phase_listener(*, src: Any, metadata: Any, metadata_group: Any, times: Any,
                          cache_hit: bool) -> None:
        phase_clock.CLOCK.credit(phases.COMPILATION, _compile_seconds(times))
        phase_clock.progress()
        if previous is not None:
            previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                     cache_hit=cache_hit)

    compilation.listener = zl_phase_listener
    phase_clock.MEASURED.add(phases.COMPILATION)

    def undo() -> None:
        if compilation.listener is zl_phase_listener:
            compilation.listener = previous

    _undo.append(undo)


# -- the benchmark's timing calls --------------------------------------------------------


def _wrap_get_latency(original: Any) -> Any:
    def get_latency(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _depth
        if _depth:
            return original(self, *args, **kwargs)
        _depth += 1
        row = ROWS.seq
        try:
            with phase_clock.phase(_TIMING) as span:
                return original(self, *args, **kwargs)
        finally:
            _depth -= 1
            _calls.append((row, span.seconds))
            phase_clock.progress()

    return get_latency


def _patch_class(cls: type) -> None:
    if benchapi.wrap_own(cls, "get_latency", _wrap_get_latency):
        phase_clock.MEASURED.update((phases.REFERENCE, phases.OPERATOR))


def install(modules: Any) -> None:
    for root in benchapi.discover_roots(modules):
        for cls in benchapi.hierarchy(root):
            _patch_class(cls)
        benchapi.on_subclass(root, PLUGIN, _patch_class)
        # A benchmark whose timing calls go unseen leaves its device time unknown.
        hooked = getattr(getattr(root, "get_latency", None), benchapi.WRAPPED_FLAG, False)
        phase_clock.DEVICE_HOOKS["timing"] = phase_clock.DEVICE_HOOKS.get("timing", True) and hooked


def resolve_calls() -> None:
    """Split the timing calls recorded so far: a row's last call is the operator's.

    Called after a test has finished (and at the end), when its rows are complete.
    """
    global _resolved
    pending = _calls[_resolved:]
    clock = phase_clock.CLOCK
    for i, (row, seconds) in enumerate(pending):
        last = i + 1 == len(pending) or pending[i + 1][0] != row
        clock.move(_TIMING, phases.OPERATOR if last else phases.REFERENCE, seconds)
    _resolved += len(pending)


def _write(*, final: bool) -> None:
    resolve_calls()
    phase_clock.write(final=final)


# -- pytest hooks ------------------------------------------------------------------------


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)
    if not _undo:
        _install_sweep()
        _install_listener()


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: Any) -> Any:
    clock = phase_clock.CLOCK
    if clock.is_open(phases.START):
        clock.leave(phases.START)
    clock.enter(phases.COLLECTION)
    try:
        yield
    finally:
        clock.leave(phases.COLLECTION)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Any:
    # Collecting a test module imports it; the collection of its items is the rest.
    if not isinstance(collector, pytest.Module) or isinstance(collector, pytest.Package):
        yield
        return
    with phase_clock.phase(phases.START):
        yield


def pytest_collection_finish(session: Any) -> None:
    install(benchapi.modules_of_items(session.items))
    _prime_triton()
    _freeze_imports()
    _write(final=False)


def _freeze_imports() -> None:
    """What collection imported (torch, Triton, flag_gems and the test modules) lives as
    long as the cell: out of every later full collection, pytest's two at the session's
    end and those its tests trigger (one over flag_gems' import took 0.14 s on a 2-core
    host, docs/validation/2026-12-08-triton-prime.md), some of them inside a pipelined
    cell's hold of the device. Before the first test, so outside it."""
    gc.collect()
    gc.freeze()
    cellenv.merge_identity(PLUGIN, {"frozen_objects": gc.get_freeze_count()})


def _prime_triton() -> None:
    """Triton's cache key, computed now, before the first test takes a pipelined cell's
    gate, unless the warm parent did; the identity says which and what it cost here."""
    name = "zl_flaggems.cell.triton_prime"
    inherited = name in sys.modules
    with phase_clock.phase(phases.COMPILATION):
        module = importlib.import_module(name)  # primes at import, unless the parent did
    if module.PRIMED_S is not None:
        cellenv.merge_identity(PLUGIN, {"triton_key": {
            "primed_in": "warm parent" if inherited else "cell",
            "seconds": 0.0 if inherited else round(module.PRIMED_S, 3)}})


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    # A pipelined cell waits for its device's timing gate here, before its first test
    # makes inputs on the device, and keeps it until it exits (its teardown and the
    # device context's end never run beside another cell's timing).
    phase_clock.CLOCK.hold_device()
    install(benchapi.modules_of_items([item]))


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    # A finished test is progress: under -q pytest's dot for it ends no line, and the
    # orchestrator reads output by lines, so an accuracy check of many quick tests
    # would otherwise be silent from its first test to its last.
    phase_clock.progress()
    _write(final=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session: Any, exitstatus: Any) -> Any:
    clock = phase_clock.CLOCK
    if not clock.is_open(phases.TEARDOWN):
        clock.enter(phases.TEARDOWN)
    _release_gate()
    yield


def _release_gate() -> None:
    """``zl ab --gate-release tests``: the tests are over; once the device is idle (this
    process's work on it finished, its cached memory released) the next cell may time
    while this one tears down. A device that cannot be made idle keeps the gate to the exit."""
    clock = phase_clock.CLOCK
    if (os.environ.get(contract.GATE_RELEASE) != contract.GATE_AFTER_TESTS or clock.gate is None
            or not clock.gate.holding):
        return
    why = _idle_device()
    if why:
        cellenv.note(PLUGIN, f"kept the timing gate until the exit: {why}")
        return
    clock.release_device()


def _idle_device() -> str:
    """Wait for this process's device work and give its cached memory back; why not, or ""."""
    torch = sys.modules.get("torch")
    if torch is None:
        return ""  # nothing ran through torch (a suite that launches without it)
    backend = cellenv.backend(PLUGIN)
    name = getattr(backend, "torch_namespace", "") if backend is not None else ""
    label = getattr(backend, "name", "?")
    if not name:
        return f"backend {label} names no torch device interface to wait for"
    interface = getattr(torch, name, None)
    if interface is None:
        return f"this torch has no torch.{name} (backend {label})"
    try:
        interface.synchronize()
        gc.collect()  # tensors only cycles still hold go back to the cache ...
        interface.empty_cache()  # ... and the cache to the device, before the gate opens
    except Exception as exc:  # noqa: BLE001 - the gate stays shut: safe, only slower
        return f"the device could not be made idle ({cellenv.one_line(exc)})"
    return ""


@pytest.hookimpl(hookwrapper=True)
def pytest_unconfigure(config: Any) -> Any:
    yield
    clock = phase_clock.CLOCK
    for name in (phases.START, phases.COLLECTION):  # a session that ended before collecting
        if clock.is_open(name):
            clock.leave(name)
    if clock.is_open(phases.TEARDOWN):
        clock.leave(phases.TEARDOWN)
    _write(final=True)
    while _undo:
        try:
            _undo.pop()()
        except Exception:  # noqa: BLE001 - undo the rest even if one step fails
            pass
