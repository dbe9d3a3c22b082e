"""The local lanes executor: one lane per device of this host (several per device in a
screen, ``--per-device``, or in A/B rounds, ``--pipeline``), one thread per lane.

Each lane takes the next task from one shared plan and runs it to the end, handing
the task function its :class:`~zl_core.campaigns.executor.Lane` (its device), so all
of an operator's cells run on one device. A resumed operator whose kept cells ran on
one of the lanes' devices waits for a lane of that device. Tasks are ordered longest
first where an earlier campaign measured them (the plan order otherwise), which keeps
the last lane from finishing long after the others.

A lane first takes its device's lock (:mod:`zl_core.cells.devicelock`) and holds it for
the whole campaign; its cells inherit it. The lanes of a pipelined device (``gated``)
share that lock and time one cell at a time: each cell takes the device's timing gate
(:mod:`zl_core.interface.timing_gate`) for its timing, so a lane's setup overlaps another
lane's timing and nothing else does. When another zl process holds the
device, the lane says so once and keeps trying while the other lanes work; it
gives up when no task is left.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from zl_core.cells.devicelock import DeviceLock
from zl_core.foundation import interrupts

from .executor import Lane, Task, TaskFunction, TaskRuntime, task_op

R = TypeVar("R")
_POLL_S = 0.2


def longest_first(tasks: Sequence[Task], expected_s: Mapping[str, float]) -> list[Task]:
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
    """The tasks left. A resumed operator whose kept cells ran on one of the lanes'
    devices (``kept_on``) waits for a lane of that device; the others go to any."""

    def __init__(self, tasks: list, devices: list[str], kept_on: Mapping[str, str]) -> None:
        self._lock = threading.Lock()
        pins = {op: device for op, device in kept_on.items() if device in devices}
        self._tasks = [(t, pins.get(task_op(t))) for t in tasks]

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


class _SharedHold:
    """One device lock for every lane of that device (a second flock from this process
    would wait for ourselves); released when its last lane leaves."""

    def __init__(self, backend: str, device: str) -> None:
        self.lock = DeviceLock(backend, device)
        self._users = 0
        self._mutex = threading.Lock()

    def try_enter(self) -> bool:
        with self._mutex:
            if self.lock.held or self.lock.try_acquire():
                self._users += 1
                return True
            return False

    def leave(self) -> None:
        with self._mutex:
            self._users -= 1
            if self._users == 0:
                self.lock.release()


class LanesExecutor:
    """Runs tasks on the given devices of one backend, ``per_device`` tasks per device at a
    time: a screen's lanes, which time at once (their verdict is the IR: zl_core.app.lanes),
    or, ``gated``, a pipeline whose cells take turns to time."""

    def __init__(self, backend: str, devices: Sequence[str], *,
                 expected_s: Mapping[str, float] | None = None, per_device: int = 1,
                 gated: bool = False) -> None:
        if not devices:
            raise ValueError("a lanes executor needs at least one device")
        if per_device < 1:
            raise ValueError("a device needs at least one lane")
        self.backend = backend
        self.devices = [str(d) for d in devices]
        self.per_device = per_device
        self.gated = gated
        self.expected_s = dict(expected_s or {})
        #: lane -> (operator, start time) of what each lane runs now.
        self.running: dict[str, tuple[str, float]] = {}

    @property
    def concurrency(self) -> int:
        """Lanes that time at the same moment: one per device when their timing is gated."""
        return len(self.devices) * (1 if self.gated else self.per_device)

    @property
    def pipeline(self) -> int:
        """Cells of one device in flight while one of them times (1: no pipeline)."""
        return self.per_device if self.gated else 1

    def _lanes(self) -> list[tuple[str, str]]:
        """(lane name, device): the device alone, or device/slot when it has several."""
        if self.per_device == 1:
            return [(d, d) for d in self.devices]
        return [(f"{d}/{slot + 1}", d) for d in self.devices for slot in range(self.per_device)]

    def run(self, fn: TaskFunction[Task, R], tasks: Iterable[Task], runtime: TaskRuntime, *,
            kept_on: Mapping[str, str] | None = None) -> Iterator[R]:
        todo = _Plan(longest_first(list(tasks), self.expected_s), self.devices, kept_on or {})
        total = len(todo)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()
        lane_runtime = attrs.evolve(runtime, sink=_SerialSink(runtime.sink))
        holds = {d: _SharedHold(self.backend, d) for d in self.devices}
        threads = [threading.Thread(target=self._lane, name=f"zl-lane-{lane}", daemon=True,
                                    args=(lane, device, holds[device], fn, todo, results, stop,
                                          lane_runtime))
                   for lane, device in self._lanes()]
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

    def _others(self, lane: str) -> str:
        return ", ".join(f"{d}:{op}" for d, (op, _) in sorted(self.running.items()) if d != lane)

    def _lane(self, lane: str, device: str, hold: _SharedHold, fn: TaskFunction, todo: _Plan,
              results: queue.Queue, stop: threading.Event, runtime: Any) -> None:
        told = False
        while not hold.try_enter():
            if stop.is_set() or not len(todo):
                return
            if not told:
                runtime.sink.line(f"lane {self.backend}:{lane}: device busy "
                                  f"({hold.lock.holder()}); waiting, other lanes go on")
                told = True
            time.sleep(_POLL_S)
        try:
            while not stop.is_set() and interrupts.requested() is None:
                task = todo.take(device)
                if task is None:
                    return
                self.running[lane] = (task_op(task), time.time())
                runtime.sink.line(f"lane {self.backend}:{lane}: {task_op(task)}"
                                  + (f" (also running: {self._others(lane)})" if len(self.running) > 1 else ""))
                try:
                    results.put(fn(task, Lane(device), runtime))
                except BaseException as exc:  # noqa: BLE001 - handed to the campaign's thread
                    results.put(_Failure(exc))
                    stop.set()
                    return
                finally:
                    self.running.pop(lane, None)
        finally:
            hold.leave()
