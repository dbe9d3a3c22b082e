"""What runs a campaign's operator tasks, and on which lane.

The campaign plans frozen task records; an executor runs a task function on each
and yields the frozen results as tasks finish. The campaign code never branches on
which executor is in use (``concurrent.futures`` style: the caller neither knows nor
cares where the work runs). :class:`SerialExecutor` runs the tasks one after the
other in this process; executors over several devices or hosts implement the same
``run``.

A task names no device: the executor hands its function the :class:`Lane` it runs on
(the device its cells use and, on a host that keeps its own copy of the campaign, that
copy's folder) together with a :class:`TaskRuntime`: the plugin host it runs cells
with, and the :class:`CellSink` it reports every finished cell to (which appends
``status.tsv`` and advances the progress display where the campaign runs).

A resumed operator runs on the device its kept cells ran on where the executor has a
lane there (``kept_on``); elsewhere the cells that would mix two cards are set aside
and it runs again whole (:func:`zl_core.campaigns.cell_run.whole_on_one_card`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol, TypeVar

import attrs

from zl_core.cells.cell import CellOutcome
from zl_core.decisions.status import append_status
from zl_core.interface.opspec import OpSpec
from zl_core.plugins.host import PluginHost
from zl_core.store.layout import CampaignLayout, round_name

from .progress import Progress

R = TypeVar("R")


class CellSink(Protocol):
    """Where a task reports what happened to each of its cells."""

    def cell_started(self, *, op: str, round_no: int, side: str, switch_value: str) -> None: ...

    def cell_finished(self, *, op: str, round_no: int, side: str, switch_value: str,
                      outcome: CellOutcome, summary: str) -> None: ...

    def cell_skipped(self, *, op: str, round_no: int, side: str, why: str) -> None: ...

    def check_started(self, *, op: str, side: str, label: str) -> None: ...

    def check_finished(self, *, op: str, side: str, text: str) -> None: ...

    def line(self, text: str) -> None: ...

    def more_cells(self, n: int, why: str = "") -> None: ...


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

    def check_started(self, *, op: str, side: str, label: str) -> None:
        """A side's accuracy-test cell is starting (a cell of the plan, not of status.tsv)."""
        self.progress.started((op, "check", side), f"{op} check {side}: {label}")

    def check_finished(self, *, op: str, side: str, text: str) -> None:
        self.progress.advance(f"{op} check {side}: {text}", key=(op, "check", side))

    def line(self, text: str) -> None:
        self.progress.line(text)

    def more_cells(self, n: int, why: str = "") -> None:
        """``n`` more cells than planned (fewer where negative: an operator that stopped
        early leaves its later rounds and checks unrun)."""
        self.progress.grow(n, why)


@attrs.frozen(kw_only=True)
class TaskRuntime:
    """What a task runs with where it runs: the plugin host and the cell sink."""

    host: PluginHost
    sink: CellSink


@attrs.frozen
class Lane:
    """Where one task runs, as its executor hands it over."""

    #: The device every cell of the task uses; None: the backend's default device (a
    #: serial campaign given no ``--device``).
    device: str | None = None
    #: The folder standing for the campaign folder on this host (a Dask worker's scratch
    #: copy); None: the campaign folder itself.
    cell_root: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))

    def layout(self, campaign: CampaignLayout) -> CampaignLayout:
        """The layout this lane writes ``campaign``'s cells into."""
        return campaign if self.cell_root is None else CampaignLayout(self.cell_root)


class OperatorTask(Protocol):
    """What an executor reads of a task: the operator it runs (the rest is the function's)."""

    @property
    def op(self) -> OpSpec: ...


Task = TypeVar("Task", bound=OperatorTask)
#: A task function: a frozen task, the lane it runs on and its runtime in, a frozen result out.
TaskFunction = Callable[[Task, Lane, TaskRuntime], R]


def task_op(task: OperatorTask) -> str:
    """The operator name of a task (one task per operator in a campaign)."""
    return task.op.op


class Executor(Protocol):
    """Runs ``fn(task, lane, runtime)`` for every task; yields each result as its task finishes.

    ``kept_on`` (operator -> device) names where a resumed operator's kept cells ran: the
    executor runs that operator on a lane of that device if it has one."""

    def run(self, fn: TaskFunction[Task, R], tasks: Iterable[Task], runtime: TaskRuntime, *,
            kept_on: Mapping[str, str] | None = None) -> Iterator[R]: ...


class SerialExecutor:
    """One task after the other, in plan order, in this process, on one device: ``device``,
    or the device a resumed operator's kept cells ran on."""

    def __init__(self, device: str | None = None) -> None:
        self.device = device

    def run(self, fn: TaskFunction[Task, R], tasks: Iterable[Task], runtime: TaskRuntime, *,
            kept_on: Mapping[str, str] | None = None) -> Iterator[R]:
        kept_on = kept_on or {}
        for task in tasks:
            yield fn(task, Lane(kept_on.get(task_op(task), self.device)), runtime)
