"""Graph timing through the device interface: capture a kernel, replay it, time it.

The device interface is Triton's (``torch.cuda``, ``torch.musa``, ...), never a
vendor named here; :mod:`zl_flaggems.cell.plugins.timing` decides when a call is
graph-timed and what a failure means.

The L2 cache (``ZL_L2``): ``warm`` captures the calls back to back, so every call but
the graph's first finds what the one before left in the cache, as
``triton.testing.do_bench_cudagraph`` does. ``flush`` captures a cache-clearing write
before every call (the one ``triton.testing.do_bench`` makes: the driver's benchmark
buffer, 256 MiB on CUDA, zeroed), captures the same writes alone into a second graph,
replays the two in turn and takes, per pair, (both - writes alone) / calls: each call
then starts from a cache holding none of its inputs (docs/validation/2026-12-07-l2-flush.md).
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable
from typing import Any

import attrs
from zl_core.interface import contract

REPLAYS = 10
ESTIMATE_CALLS = 5
WARMUP_CALLS = (5, 200)  # bounds on warm-up calls before capture
MAX_GRAPH_CALLS = 1000  # bounds capture time and graph memory for tiny kernels
MAX_REPLAYS = 100  # a capped graph of a tiny kernel is replayed more often, up to this
#: Device time of one replay when the cell is given none (the contract's default).
DEFAULT_REPLAY_MS = contract.DEFAULT_REPLAY_MS


@attrs.frozen
class GraphTiming:
    """What the replays of one measurement gave: milliseconds per call, one per replay.
    ``flush_ms``: with the L2 flushed, the median time of one flush alone (subtracted)."""

    times: tuple[float, ...]
    calls_per_graph: int
    flush_ms: float | None = None

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times)

    @property
    def spread_pct(self) -> float | None:
        """(max - min) / median of the replays, in percent: the within-cell spread, the
        same measure the report gives across processes."""
        med = self.median_ms
        if len(self.times) < 2 or not med > 0:
            return None
        return (max(self.times) - min(self.times)) / med * 100.0


class CaptureFailure(Exception):
    """A graph-timing attempt failed in ``phase``; ``error`` is the original exception."""

    def __init__(self, phase: str, error: BaseException):
        super().__init__(f"{phase}: {error}")
        self.phase = phase
        self.error = error


def graph_class(di: Any) -> Any:
    """The device interface's graph class: ``CUDAGraph``, else any ``*Graph`` class."""
    cls = getattr(di, "CUDAGraph", None)
    if isinstance(cls, type):
        return cls
    for name in sorted(dir(di)):
        if name.endswith("Graph") and isinstance(getattr(di, name, None), type):
            return getattr(di, name)
    return None


@contextlib.contextmanager
def scratch_rng(di: Any):
    """Run under a copy of each default generator's state and restore it afterwards, so
    an aborted capture cannot leave the process's generators unusable. A no-op where
    the interface has no graph-safe generator API."""
    saved: list[tuple[Any, Any]] = []
    try:
        for gen in list(getattr(di, "default_generators", None) or ()):
            get_state = getattr(gen, "graphsafe_get_state", None)
            set_state = getattr(gen, "graphsafe_set_state", None)
            if not callable(get_state) or not callable(set_state):
                continue
            state = get_state()
            set_state(state.clone_state())
            saved.append((gen, state))
    except Exception:  # noqa: BLE001 - an API we cannot drive: run with the real state
        for gen, state in saved:
            with contextlib.suppress(Exception):  # best effort: put back what was swapped
                gen.graphsafe_set_state(state)
        saved = []
    try:
        yield
    finally:
        for gen, state in saved:
            with contextlib.suppress(Exception):
                gen.graphsafe_set_state(state)


def _reset_grads(grad_to_none: Any, detach: bool = False) -> None:
    if grad_to_none is None:
        return
    for x in grad_to_none:
        if detach:
            x.detach_()
            x.requires_grad_(True)
        x.grad = None


def summarize(times: list[float], quantiles: Any, return_mode: str) -> Any:
    """Triton's own summary when available (same semantics), else a local one."""
    try:
        from triton.testing import _summarize_statistics

        return _summarize_statistics(times, quantiles, return_mode)
    except ImportError:
        pass
    if return_mode == "all":
        return times
    summaries: dict[str, Callable[[list[float]], float]] = {"min": min, "max": max, "mean": statistics.mean}
    return summaries.get(return_mode, statistics.median)(times)


def replay_plan(estimate_ms: float, replay_ms: float) -> tuple[int, int]:
    """(calls per graph, replays): a graph of about ``replay_ms`` replayed ten times; a
    graph capped at MAX_GRAPH_CALLS is replayed more often to spend the same budget."""
    if estimate_ms <= 0:
        return MAX_GRAPH_CALLS, REPLAYS
    n_calls = min(max(1, int(replay_ms / estimate_ms)), MAX_GRAPH_CALLS)
    graph_ms = n_calls * estimate_ms
    replays = REPLAYS
    if graph_ms < replay_ms:
        replays = min(MAX_REPLAYS, max(REPLAYS, int(REPLAYS * replay_ms / graph_ms)))
    return n_calls, replays


def _timed_replay(di: Any, graph: Any) -> float:
    start, end = di.Event(enable_timing=True), di.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    di.synchronize()
    return float(start.elapsed_time(end))


def graph_replays(fn: Callable, di: Any, *, warmup: float = 25, replay_ms: float = DEFAULT_REPLAY_MS,
                  grad_to_none: Any = None, flush: Callable[[], Any] | None = None,
                  apart: Callable[[], Any] | None = None) -> GraphTiming:
    """Time ``fn`` by capturing it into one graph and replaying it.

    ``flush``: a write that clears the L2 cache, captured before every call and
    subtracted (a graph of the writes alone, replayed before each timed replay); None:
    the calls run back to back on a warm cache. The replay budget covers a call with
    its flush, and the flushes alone are replayed too: a flushed measurement spends up
    to twice the device time of a warm one, the most where the kernel is short.
    ``apart``: a context the capture of the flushes alone runs in (the TTGIR recorder's
    harness: what that capture launches, the flushes and the device interface's own
    capture prologue, is the timer's, not the operator's).

    Raises :class:`CaptureFailure` naming the phase (sync, warmup, capture, replay).
    """

    def call() -> None:
        if flush is not None:
            flush()
        fn()

    phase = "sync"
    try:
        di.synchronize()  # inputs may still be in flight on the default stream
        phase = "warmup"
        graph_cls = graph_class(di)
        if graph_cls is None or not callable(getattr(di, "graph", None)):
            raise RuntimeError(f"device interface {getattr(di, '__name__', di)!r} has no graph API")
        with di.stream(di.Stream()):
            call()  # absorbs JIT compilation and autotuning
            _reset_grads(grad_to_none, detach=True)
            di.synchronize()
            start, end = di.Event(enable_timing=True), di.Event(enable_timing=True)
            start.record()
            for _ in range(ESTIMATE_CALLS):
                call()
            end.record()
            di.synchronize()
            estimate = start.elapsed_time(end) / ESTIMATE_CALLS
            n_warm = WARMUP_CALLS[1] if estimate <= 0 else int(warmup / estimate)
            for _ in range(min(max(n_warm, WARMUP_CALLS[0]), WARMUP_CALLS[1])):
                call()
            di.synchronize()
            n_calls, replays = replay_plan(estimate, replay_ms)
            phase = "capture"
            with scratch_rng(di):
                graph = graph_cls()
                with di.graph(graph):
                    for _ in range(n_calls):
                        _reset_grads(grad_to_none)
                        call()
                flushes = None
                if flush is not None:
                    flushes = graph_cls()
                    with apart() if apart is not None else contextlib.nullcontext(), di.graph(flushes):
                        for _ in range(n_calls):
                            flush()
                di.synchronize()
                phase = "replay"
                # The first replay uploads the graph: 3-10% slower than the rest on the
                # H200 (docs/validation/noise-floor.md), so it is not timed.
                graph.replay()
                if flushes is not None:
                    flushes.replay()
                di.synchronize()
                times: list[float] = []
                flush_times: list[float] = []
                for _ in range(replays):
                    # The flushes alone first, then the calls with theirs: one pair, so
                    # a drift of the clocks between replays falls on both.
                    alone = _timed_replay(di, flushes) if flushes is not None else 0.0
                    both = _timed_replay(di, graph)
                    flush_times.append(alone / n_calls)
                    times.append((both - alone) / n_calls)
                del graph, flushes
    except CaptureFailure:
        raise
    except Exception as exc:
        raise CaptureFailure(phase, exc) from exc
    return GraphTiming(times=tuple(times), calls_per_graph=n_calls,
                       flush_ms=statistics.median(flush_times) if flush is not None else None)
