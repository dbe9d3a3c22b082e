"""An operator's next cell started while its previous one holds the device (``zl ab --pipeline N``).

Lanes overlap one operator's cells with other operators' cells; an operator's own cells
ran one after another, so a campaign of one operator gained nothing from a pipeline and
a short one drained at its end. Now, once a cell takes its device's timing gate (it
writes :data:`~zl_core.interface.contract.GATE_TAKEN_FILE`), its operator's next cell
starts on a thread of its own with a turn file (:data:`~zl_core.interface.contract.GATE_TURN`):
it starts, imports and collects beside the running cell's timing, then waits for its
turn before it takes the gate. When the running cell (and its retries) ended, the lane
gives the turn: go, and the next cell takes the gate as soon as it is free; stop (the
operator stopped: a failed or skipped cell), and the next cell exits having done nothing
on the device, its folder removed and no row written. So an operator's cells still time
in their planned order, round by round and side by side.

Only cells after round 1 start early (round 1's B replays A's picks, later rounds load
round 1's compile cache), only in a plan of fixed rounds (an adaptive plan decides after
each round whether there is another), and only into a cell folder not there yet (a
resumed campaign's kept or half-written cells go the usual way).
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from zl_core.decisions.ir_verdict import SideResult
from zl_core.foundation.errors import PreflightError
from zl_core.interface import contract
from zl_core.interface.provider import CellRequest
from zl_core.store.layout import op_dir_of, round_name

from .cell_run import execute, finished, refused
from .executor import TaskRuntime

#: How often the lane looks whether the running cell took the gate.
POLL_S = 0.1
#: Where the turn files of an operator's early cells live (beside its rounds).
TURNS_DIR = ".zl_turns"


@attrs.define
class Early:
    """A cell started before its turn; :meth:`go` or :meth:`stop` settles it."""

    runtime: TaskRuntime
    request: CellRequest
    round_no: int
    switch_value: str
    turn: Path
    thread: threading.Thread | None = None
    result: list = attrs.field(factory=list)  # [outcome] or [PreflightError] or [another exception]

    @property
    def key(self) -> tuple[int, str]:
        return self.round_no, self.request.side

    def go(self) -> SideResult:
        """Its turn: it times once the gate is free; its result, reported as run_side's."""
        self._say(contract.TURN_GO)
        assert self.thread is not None
        self.thread.join()
        self.turn.unlink(missing_ok=True)
        op, side = self.request.op.op, self.request.side
        self.runtime.sink.cell_started(op=op, round_no=self.round_no, side=side,
                                       switch_value=self.switch_value)
        got = self.result[0]
        if isinstance(got, PreflightError):
            return refused(self.runtime, self.request, got, round_no=self.round_no,
                           switch_value=self.switch_value)
        if isinstance(got, BaseException):
            raise got
        return finished(self.runtime, self.request, got, round_no=self.round_no,
                         switch_value=self.switch_value)

    def stop(self) -> None:
        """Never its turn: it ends before touching the device and leaves nothing behind.
        An interrupt its run met (Ctrl-C, SIGTERM, zl's own) goes on to the lane."""
        self._say(contract.TURN_STOP)
        if self.thread is not None:
            self.thread.join()
        self.turn.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.turn.parent.rmdir()
        shutil.rmtree(self.request.out_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            Path(self.request.out_dir).parent.rmdir()  # its round's folder, when it was the first
        got = self.result[0] if self.result else None
        if isinstance(got, BaseException) and not isinstance(got, Exception):
            raise got

    def _say(self, word: str) -> None:
        staged = self.turn.with_name(self.turn.name + ".tmp")
        staged.write_text(word, encoding="utf-8")
        staged.replace(self.turn)  # the cell reads a whole word or no file


def applies(*, pipeline: int, fixed_rounds: bool, retuned: bool) -> bool:
    """Whether an operator's later cells start early: in a pipelined lane, with a plan of
    fixed rounds, without side R (whose cycle decides what comes next)."""
    return pipeline > 1 and fixed_rounds and not retuned


def start_early(runtime: TaskRuntime, suite: str, request: CellRequest, *, round_no: int,
                switch_value: str) -> Early | None:
    """Start ``request``'s cell now, to time when given its turn; None where it may not
    (its folder is there already: a resumed campaign's)."""
    if Path(request.out_dir).exists():
        return None
    turns = op_dir_of(Path(request.out_dir)) / TURNS_DIR
    turns.mkdir(parents=True, exist_ok=True)
    turn = turns / f"{round_name(round_no)}{request.side}"
    turn.unlink(missing_ok=True)
    early = Early(runtime=runtime, request=attrs.evolve(request, gate_turn=str(turn)),
                  round_no=round_no, switch_value=switch_value, turn=turn)
    provider = runtime.host.get_provider(suite)

    def run() -> None:
        try:
            early.result.append(execute(runtime, provider, early.request))
        except BaseException as exc:  # noqa: BLE001 - handed to the lane by go() (or stop(), an interrupt)
            early.result.append(exc)

    early.thread = threading.Thread(target=run, name=f"zl-early-{request.op.op}", daemon=True)
    early.thread.start()
    return early


@contextlib.contextmanager
def next_when_taken(cell_dir: Path, launch: Callable[[], Early | None] | None) -> Iterator[list[Early]]:
    """While the block runs a cell, start the next one (``launch``) once this one holds
    the gate; the list holds it afterwards, if it started."""
    started: list[Early] = []
    if launch is None:
        yield started
        return
    done = threading.Event()
    marker = Path(cell_dir) / contract.GATE_TAKEN_FILE

    def watch() -> None:
        while not done.wait(POLL_S):
            if marker.exists():
                try:
                    early = launch()
                except Exception:  # noqa: BLE001 - no early start: the cell runs in its turn as before
                    return
                if early is not None:
                    started.append(early)
                return

    watcher = threading.Thread(target=watch, name="zl-early-watch", daemon=True)
    watcher.start()
    try:
        yield started
    finally:
        done.set()
        watcher.join()
