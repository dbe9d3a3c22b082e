"""pytest plugin: time benchmark calls by graph replay where the backend can, else directly.

FlagGems' kernel mode looks up ``triton.testing.do_bench`` at call time, so the
plugin replaces that attribute. Only a *measurement* call is routed: one that is
not nested inside another (an autotuner benchmarking configs inside ``fn``
reaches the original), and that asks for a single number (no ``quantiles``, not
``return_mode="all"``: that is how Triton's autotuner calls it).

Graph timing (timer ``graph``: ``ZL_TIMER=graph``, or ``auto`` on a backend that
declares ``graph_capture``) goes through Triton's device interface
(``triton.runtime.driver.active.get_device_interface()``: ``torch.cuda``,
``torch.musa``, ...) rather than ``torch.cuda`` by name: warm up on a side
stream, estimate one call, capture N calls into one graph under a scratch RNG
state, replay it ten times, median of replay time / N. N is chosen so that one
replay lasts about ``ZL_REPLAY_MS`` (default 30 ms, three times do_bench's ``rep``
over the ten), chosen from measured device seconds per decided verdict
(docs/validation/noise-floor.md). A first, untimed replay uploads the graph. Each
graph-timed call logs the spread of its replays, the within-cell spread the report
shows beside the spread across processes.

The L2 cache the graph-timed calls find (``ZL_L2``, the identity's ``l2``): ``warm``,
each call after the one before as Triton's ``do_bench_cudagraph`` runs them, or
``flush``, each call after a write that clears the cache, subtracted
(:func:`zl_flaggems.cell.graph_timing.graph_replays`); the write is Triton's driver's,
the one ``do_bench`` makes before every call. A direct-timed cell records ``flush``
whatever was asked: ``do_bench`` always clears the cache.

When capture fails the error is classified by the backend plugin
(``zl_classify_capture_error``; every exception in the chain, worst wins):

* fatal: the kernel is broken; re-raised, no latency is recorded;
* poisoned: the attempt broke the device context; ``BENCHMARK_CAPTURE_POISONED``
  is printed and the cell stops (non-zero exit) at the end of the test;
* recoverable: ``BENCHMARK_DIRECT_NO_CUDAGRAPH op=.. phase=.. error=..`` and this
  call is timed directly; its row is marked as a fallback.

Ops in the backend's ``capture_deny`` (pytest function name minus ``test_``) are
never attempted (``phase=denylist``). Direct timing takes the median of
``ZL_DIRECT_REPEAT`` calls of the original ``do_bench``.

Every routed call is appended to :data:`TIMING_LOG` with its row and timer; the
results plugin reads it. The capture and replay itself is
:mod:`zl_flaggems.cell.graph_timing`'s.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable, Collection
from typing import Any

import attrs
import pytest
from zl_core.interface import contract

from zl_flaggems.cell import cellenv, markers
from zl_flaggems.cell.graph_timing import (
    DEFAULT_REPLAY_MS,
    CaptureFailure,
    GraphTiming,
    graph_replays,
    summarize,
)
from zl_flaggems.cell.rowclock import CLOCK
from zl_flaggems.cell.ttgir_recorder import get_recorder
from zl_flaggems.common.plugin_order import resolve_timer

PLUGIN = "timing"
POISONED_EXIT = int(pytest.ExitCode.INTERRUPTED)
_SEVERITY = {"recoverable": 0, "poisoned": 1, "fatal": 2}


@attrs.frozen(kw_only=True)
class TimedCall:
    """One measurement call as it was timed."""

    row: int  # rowclock sequence number when the call ran (0 = before any row)
    op: str
    timer: str  # "graph" | "direct"
    fallback: bool  # meant for graph, timed directly
    phase: str | None = None  # where the graph attempt failed, or "denylist"
    error: str | None = None
    repeat: int = 1  # direct calls whose median this is
    replays: int | None = None  # graph replays whose median this is
    replay_spread_pct: float | None = None  # (max - min) / median of those replays
    flush_ms: float | None = None  # graph, L2 flushed: one flush alone, subtracted


#: Every routed call of this process, in order (read by the results plugin).
TIMING_LOG: list[TimedCall] = []


class Poisoned(Exception):
    """Raised for every call after a poisoning capture error: nothing more runs on that context."""


# -- routing ---------------------------------------------------------------------------


def exception_chain(exc: BaseException, limit: int = 8) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < limit:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


@attrs.define
class Timer:
    """Routes measurement calls; built by the plugin, or directly by tests with fakes."""

    original: Callable
    mode: str  # resolved timer: "graph" | "direct"
    backend: Any = None
    classify: Callable[[Any, BaseException], str] | None = None
    device_interface: Callable[[], Any] | None = None
    repeat: int = 1
    replay_ms: float = DEFAULT_REPLAY_MS
    #: A write that clears the L2 cache before every graph-timed call (the L2 ``flush``
    #: mode), built on first use; None: the calls find a warm cache.
    flush: Callable[[], Callable[[], Any]] | None = None
    #: The context the capture of the flushes alone runs in (the TTGIR recorder's harness).
    apart: Callable[[], Any] | None = None
    op: Callable[[], str] = lambda: ""
    graph: Callable[..., GraphTiming] = graph_replays
    log: list = attrs.field(factory=list)
    poisoned: str | None = None
    _local: threading.local = attrs.field(factory=threading.local)

    def do_bench(self, fn: Callable, warmup: Any = 25, rep: Any = 100, grad_to_none: Any = None,
                 quantiles: Any = None, return_mode: str = "mean", **extra: Any) -> Any:
        kwargs = dict(warmup=warmup, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                      return_mode=return_mode, **extra)
        if getattr(self._local, "depth", 0) > 0 or quantiles is not None or return_mode == "all":
            return self.original(fn, **kwargs)  # a tuner's call, or one inside a measurement
        if self.poisoned is not None:
            raise Poisoned(f"device context poisoned earlier in this cell: {self.poisoned}")
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            return self._measure(fn, kwargs)
        finally:
            self._local.depth -= 1

    def _measure(self, fn: Callable, kwargs: dict) -> Any:
        op = self.op() or "<unknown>"
        if self.mode != "graph":
            return self._direct(fn, kwargs, op, fallback=False)
        deny: Collection[str] = (getattr(self.backend, "capture_deny", frozenset())
                                 if self.backend is not None else ())
        if op in deny:
            error = f"backend {getattr(self.backend, 'name', '?')} denies capture for this op"
            markers.emit(markers.DIRECT_NO_CUDAGRAPH, ("op", op), ("phase", "denylist"), ("error", error))
            return self._direct(fn, kwargs, op, fallback=True, phase="denylist", error=error)
        try:
            di = self.device_interface() if self.device_interface is not None else None
            if di is None:
                raise CaptureFailure("setup", RuntimeError("no device interface for graph capture"))
            flush = None
            if self.flush is not None:
                try:
                    flush = self.flush()
                except Exception as exc:  # classified as any graph failure
                    raise CaptureFailure("flush", exc) from exc
            timing = self.graph(fn, di, warmup=kwargs["warmup"], replay_ms=self.replay_ms,
                                grad_to_none=kwargs["grad_to_none"], flush=flush, apart=self.apart)
        except CaptureFailure as failure:
            verdict, decisive = self._classify(failure.error)
            line = cellenv.one_line(decisive)
            if verdict == "fatal":
                raise failure.error from None
            if verdict == "poisoned":
                self.poisoned = line
                markers.emit(markers.CAPTURE_POISONED, ("op", op), ("error", line))
                pytest.exit(f"graph capture poisoned the device context (op={op}): {line}",
                            returncode=POISONED_EXIT)
            markers.emit(markers.DIRECT_NO_CUDAGRAPH, ("op", op), ("phase", failure.phase), ("error", line))
            self._settle()
            return self._direct(fn, kwargs, op, fallback=True, phase=failure.phase, error=line)
        self.log.append(TimedCall(row=CLOCK.seq, op=op, timer="graph", fallback=False,
                                  replays=len(timing.times),
                                  replay_spread_pct=timing.spread_pct, flush_ms=timing.flush_ms))
        return summarize(list(timing.times), None, kwargs["return_mode"])

    def _classify(self, exc: BaseException) -> tuple[str, BaseException]:
        """Worst class over the exception chain; for recoverable, the root cause is shown."""
        chain = exception_chain(exc)
        best, decisive = "recoverable", chain[-1]
        for e in chain:
            try:
                verdict = self.classify(self.backend, e) if self.classify and self.backend else "recoverable"
            except Exception as hook_exc:  # noqa: BLE001
                cellenv.note(PLUGIN, f"capture-error classifier failed: {cellenv.one_line(hook_exc)}")
                verdict = "recoverable"
            if _SEVERITY.get(verdict, 0) > _SEVERITY[best]:
                best, decisive = verdict, e
        return best, decisive

    def _settle(self) -> None:
        """Let an aborted capture finish before timing directly on the same device."""
        try:
            di = self.device_interface() if self.device_interface is not None else None
            if di is not None:
                di.synchronize()
        except Exception:  # noqa: BLE001 - the direct call reports real problems
            pass

    def _direct(self, fn: Callable, kwargs: dict, op: str, *, fallback: bool,
                phase: str | None = None, error: str | None = None) -> Any:
        n = max(1, self.repeat)
        if n == 1:
            value = self.original(fn, **kwargs)
        else:
            value = statistics.median(float(self.original(fn, **kwargs)) for _ in range(n))
        self.log.append(TimedCall(row=CLOCK.seq, op=op, timer="direct", fallback=fallback,
                                  phase=phase, error=error, repeat=n))
        return value


# -- plugin state and hooks ---------------------------------------------------------------

_TIMER: Timer | None = None
_current_op = ""


def current_op() -> str:
    return _current_op or cellenv.env(contract.OP)


def _device_interface() -> Any:
    import triton

    return triton.runtime.driver.active.get_device_interface()


def l2_mode(requested: str) -> tuple[str, str | None]:
    """(the L2 mode a graph timer applies, a note or None) for ``ZL_L2``'s value."""
    value = (requested or contract.L2_UNSET).strip().lower()
    if value in contract.L2_MODES:
        return value, None
    return contract.L2_UNSET, f"unknown {contract.L2}={requested!r}; using {contract.L2_UNSET}"


def _flusher() -> Callable[[], Callable[[], Any]]:
    """Triton's driver's cache-clearing write (the one ``do_bench`` makes), its buffer
    allocated once on first use."""
    made: list[Callable[[], Any]] = []

    def get() -> Callable[[], Any]:
        if not made:
            import triton

            driver = triton.runtime.driver.active
            buffer = driver.get_empty_cache_for_benchmark()
            made.append(lambda: driver.clear_cache(buffer))
        return made[0]

    return get


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)
    global _TIMER
    if _TIMER is not None:
        return
    backend = cellenv.backend(PLUGIN)
    mode, message = resolve_timer(cellenv.env(contract.TIMER) or "auto", backend)
    if message:
        cellenv.note(PLUGIN, message)
    repeat = cellenv.env_int(contract.DIRECT_REPEAT, 1)
    replay_ms = cellenv.env_float(contract.REPLAY_MS, DEFAULT_REPLAY_MS)
    l2, l2_note = l2_mode(cellenv.env(contract.L2))
    if l2_note:
        cellenv.note(PLUGIN, l2_note)
    if mode == "direct" and l2 != "flush":
        cellenv.note(PLUGIN, f"{contract.L2}={l2} does not apply to timer=direct: triton's "
                     "do_bench clears the L2 cache before every call (l2=flush)")
        l2 = "flush"
    if mode == "none":
        cellenv.merge_identity(PLUGIN, {"timer": "none"})
        return
    try:
        from triton import testing
    except Exception as exc:  # noqa: BLE001
        cellenv.note(PLUGIN, f"cannot import triton.testing ({cellenv.one_line(exc)}); timing not controlled")
        return

    def classify(backend_: Any, exc: BaseException) -> str:
        from zl_core import plugin_host

        return plugin_host().classify_capture_error(backend_, exc)

    timer = Timer(original=testing.do_bench, mode=mode, backend=backend, classify=classify,
                  device_interface=_device_interface, repeat=repeat, replay_ms=replay_ms,
                  flush=_flusher() if l2 == "flush" else None, apart=get_recorder().harness,
                  op=current_op, log=TIMING_LOG)

    def do_bench(fn: Callable, warmup: Any = 25, rep: Any = 100, grad_to_none: Any = None,
                 quantiles: Any = None, return_mode: str = "mean", **extra: Any) -> Any:
        return timer.do_bench(fn, warmup=warmup, rep=rep, grad_to_none=grad_to_none,
                              quantiles=quantiles, return_mode=return_mode, **extra)

    do_bench.__zl_timer__ = timer  # type: ignore[attr-defined]  # a marker on the wrapper function
    do_bench.__wrapped__ = testing.do_bench  # type: ignore[attr-defined]  # as functools.wraps sets it
    testing.do_bench = do_bench
    _TIMER = timer
    # Overwritten on purpose: the timer this process installed is the fact; the
    # provider's plan (and the core's request) only forecast it.
    cellenv.merge_identity(PLUGIN, {"timer": mode, "direct_repeat": repeat,
                                    "replay_ms": replay_ms, "l2": l2})
    cellenv.note(PLUGIN, f"timer={mode} direct_repeat={repeat} replay_ms={replay_ms:g} l2={l2}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    global _current_op
    _current_op = cellenv.op_of_item(item)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    timer = _TIMER
    if timer is not None and timer.poisoned is not None:
        # The benchmark may have turned the exit into an ordinary test failure.
        pytest.exit(f"graph capture poisoned the device context: {timer.poisoned}",
                    returncode=POISONED_EXIT)


def pytest_unconfigure(config: Any) -> None:
    global _TIMER
    timer = _TIMER
    if timer is None:
        return
    original = timer.original
    try:
        from triton import testing

        if getattr(testing.do_bench, "__zl_timer__", None) is timer:
            testing.do_bench = original
    except Exception:  # noqa: BLE001 - at the session's end: the process exits next
        pass
    _TIMER = None
