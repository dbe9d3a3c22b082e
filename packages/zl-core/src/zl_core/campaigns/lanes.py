"""The local lanes executor: one lane per device of this host, one thread per lane.

Each lane takes the next task from one shared plan, pins it to its device
(:func:`~zl_core.campaigns.retarget.on_device`) and runs it to the end, so all of
an operator's cells run on one device. Tasks are ordered longest first where an
earlier campaign measured them (the plan order otherwise), which keeps the last
lane from finishing long after the others.

A lane first takes its device's lock (:mod:`zl_core.devicelock`) and holds it for
the whole campaign; its cells inherit it. When another zl process holds the
device, the lane says so once and keeps trying while the other lanes work; it
gives up when no task is left.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from zl_core import interrupts
from zl_core.devicelock import DeviceLock

from .retarget import devices_of, on_device

T = TypeVar("T")
R = TypeVar("R")
_POLL_S = 0.2


def task_op(task: Any) -> str:
    """The operator name of a task record (its ``op`` field, an OpSpec or a name)."""
    op = getattr(task, "op", "")
    return str(getattr(op, "op", op))


def longest_first(tasks: Sequence[T], expected_s: Mapping[str, float]) -> list[T]:
    """Known long tasks first; tasks never measured keep plan order, at the mean's place."""
    known = [expected_s[task_op(t)] for t in tasks if task_op(t) in expected_s]
    mean = sum(known) / len(known) if known else 0.0
    order = sorted(range(len(tasks)), key=lambda i: (-expected_s.get(task_op(tasks[i]), mean), i))
    return [tasks[i] for i in order]


class _SerialSink:
    """The campaign's sink, called by one lane at a time (status.tsv rows stay whole)."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._sink, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return target(*args, **kwargs)
        return call


@attrs.define
class _Failure:
    exc: BaseException


class _Plan:
    """The tasks left. A task that already names one of the lanes' devices (a resumed
    operator whose kept cells ran there) waits for that lane; the others go to any."""

    def __init__(self, tasks: list, devices: list[str]) -> None:
        self._lock = threading.Lock()
        self._tasks = [(t, self._pin(t, devices)) for t in tasks]

    @staticmethod
    def _pin(task: Any, devices: list[str]) -> str | None:
        named = devices_of(task)
        return next(iter(named)) if len(named) == 1 and next(iter(named)) in devices else None

    def __len__(self) -> int:
        return len(self._tasks)

    def take(self, device: str) -> Any | None:
        with self._lock:
            for wanted in (device, None):
                for i, (task, pin) in enumerate(self._tasks):
                    if pin == wanted:
                        del self._tasks[i]
                        return task
        return None


class LanesExecutor:
    """Runs tasks on the given devices of one backend, one task per device at a time."""

    def __init__(self, backend: str, devices: Sequence[str], *,
                 expected_s: Mapping[str, float] | None = None) -> None:
        if not devices:
            raise ValueError("a lanes executor needs at least one device")
        self.backend = backend
        self.devices = [str(d) for d in devices]
        self.expected_s = dict(expected_s or {})
        #: device -> (operator, start time) of what each lane runs now.
        self.running: dict[str, tuple[str, float]] = {}

    @property
    def concurrency(self) -> int:
        return len(self.devices)

    def run(self, fn: Callable[[T, Any], R], tasks: Iterable[T], runtime: Any) -> Iterator[R]:
        todo = _Plan(longest_first(list(tasks), self.expected_s), self.devices)
        total = len(todo)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()
        lane_runtime = attrs.evolve(runtime, sink=_SerialSink(runtime.sink))
        threads = [threading.Thread(target=self._lane, name=f"zl-lane-{d}", daemon=True,
                                    args=(d, fn, todo, results, stop, lane_runtime))
                   for d in self.devices]
        for thread in threads:
            thread.start()
        try:
            for _ in range(total):
                while True:
                    try:
                        item = results.get(timeout=_POLL_S)
                        break
                    except queue.Empty:
                        if not any(t.is_alive() for t in threads) and results.empty():
                            raise RuntimeError("every lane stopped with tasks left; "
                                               "see the lines above") from None
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
        finally:
            stop.set()
            for thread in threads:
                thread.join()

    def _others(self, device: str) -> str:
        return ", ".join(f"{d}:{op}" for d, (op, _) in sorted(self.running.items()) if d != device)

    def _lane(self, device: str, fn: Callable, todo: _Plan, results: queue.Queue,
              stop: threading.Event, runtime: Any) -> None:
        lock = DeviceLock(self.backend, device)
        told = False
        try:
            while not lock.try_acquire():
                if stop.is_set() or not len(todo):
                    return
                if not told:
                    runtime.sink.line(f"lane {self.backend}:{device}: device busy "
                                      f"({lock.holder()}); waiting, other lanes go on")
                    told = True
                time.sleep(_POLL_S)
            while not stop.is_set() and interrupts.requested() is None:
                task = todo.take(device)
                if task is None:
                    return
                self.running[device] = (task_op(task), time.time())
                runtime.sink.line(f"lane {self.backend}:{device}: {task_op(task)}"
                                  + (f" (also running: {self._others(device)})" if len(self.running) > 1 else ""))
                try:
                    results.put(fn(on_device(task, device), runtime))
                except BaseException as exc:  # noqa: BLE001 - handed to the campaign's thread
                    results.put(_Failure(exc))
                    stop.set()
                    return
                finally:
                    self.running.pop(device, None)
        finally:
            lock.release()
