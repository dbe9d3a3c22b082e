"""What runs a campaign's operator tasks.

The campaign plans frozen task records; an executor runs a task function on each
and yields the frozen results as tasks finish. The campaign code never branches on
which executor is in use (``concurrent.futures`` style: the caller neither knows nor
cares where the work runs). :class:`SerialExecutor` runs the tasks one after the
other in this process; executors over several devices or hosts implement the same
``run``.

A task function receives the task and a :class:`TaskRuntime`: the plugin host it
runs cells with, and the :class:`CellSink` it reports every finished cell to (which
appends ``status.tsv`` and advances the progress display where the campaign runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

import attrs

from zl_core.cell import CellOutcome
from zl_core.host import PluginHost
from zl_core.status import append_status
from zl_core.store.layout import CampaignLayout, round_name

from .progress import Progress

T = TypeVar("T")
R = TypeVar("R")


class CellSink(Protocol):
    """Where a task reports what happened to each of its cells."""

    def cell_started(self, *, op: str, round_no: int, side: str, switch_value: str) -> None: ...

    def cell_finished(self, *, op: str, round_no: int, side: str, switch_value: str,
                      outcome: CellOutcome, summary: str) -> None: ...

    def cell_skipped(self, *, op: str, round_no: int, side: str, why: str) -> None: ...

    def line(self, text: str) -> None: ...

    def more_cells(self, n: int) -> None: ...


@attrs.define
class CampaignSink:
    """The local sink: appends each finished cell to status.tsv and shows progress."""

    layout: CampaignLayout
    progress: Progress

    def cell_started(self, *, op: str, round_no: int, side: str, switch_value: str) -> None:
        where = f"{round_name(round_no)} " if round_no else ""
        self.progress.started((op, round_no, side), f"{op} {where}{side} [{switch_value}]")

    def cell_finished(self, *, op: str, round_no: int, side: str, switch_value: str,
                      outcome: CellOutcome, summary: str) -> None:
        append_status(self.layout.root, round_no=round_no, op=op, side=side,
                      switch_value=switch_value, outcome=outcome)
        where = f"{round_name(round_no)} " if round_no else ""
        self.progress.advance(f"{op} {where}{side} [{switch_value}] {summary}",
                              key=(op, round_no, side))

    def cell_skipped(self, *, op: str, round_no: int, side: str, why: str) -> None:
        where = f"{round_name(round_no)} " if round_no else ""
        self.progress.advance(f"{op} {where}{side}: skipped ({why})")

    def line(self, text: str) -> None:
        self.progress.line(text)

    def more_cells(self, n: int) -> None:
        self.progress.grow(n)


@attrs.frozen(kw_only=True)
class TaskRuntime:
    """What a task runs with where it runs: the plugin host and the cell sink."""

    host: PluginHost
    sink: CellSink


class Executor(Protocol):
    """Runs ``fn(task, runtime)`` for every task; yields each result as its task finishes."""

    def run(self, fn: Callable[[T, TaskRuntime], R], tasks: Iterable[T],
            runtime: TaskRuntime) -> Iterator[R]: ...


class SerialExecutor:
    """One task after the other, in plan order, in this process."""

    def run(self, fn: Callable[[T, TaskRuntime], R], tasks: Iterable[T],
            runtime: TaskRuntime) -> Iterator[R]:
        for task in tasks:
            yield fn(task, runtime)
