"""The timing gate: one cell at a time times on a device while a lane's next cells set up.

With a pipeline (``zl ab --pipeline N``) a lane keeps up to N cells of one device in
flight: while one times, the others start their interpreters, import, collect and wait.
What must never overlap is a cell's timing and another cell's work on the device, so each
cell takes the device's gate itself before its first test (a provider's cell calls
:meth:`~zl_core.interface.phases.PhaseClock.hold_device` there; entering a device phase
takes it too, for a cell that has no such hook) and keeps it until its process exits:
its inputs, compilation, timing, IR dump, teardown and the end of its device context all
run alone on the device. Only interpreter start, imports and collection overlap another
cell's timing. With ``zl ab --gate-release tests`` (:data:`contract.GATE_RELEASE`) the
cell gives it back once its last test ended and it made its device idle (synchronised,
its memory released): its teardown and the end of its device context then run beside
the next cell's timing, a measurement question the caliber field ``gate_release``
keeps apart. (Giving the gate back at the end of the test session instead, and taking
it at the first timing call, let a waiting cell build its first inputs and a finishing
cell end its context beside a timing: relu's 2 GiB shapes read up to 3.8% slow,
docs/validation/2026-12-07-ab-pipeline.md.)

The gate is an exclusive ``flock`` on a file beside the device's lock (the orchestrator
names it in :data:`ENV`): the kernel drops it when its holder exits or dies, so a cell
that crashes, is killed or stalls never leaves the gate shut, and a cell that fails
during setup never held it. The gate's own record, written into the cell's phase record
(:data:`KEY`), says when it was taken, the last moment the cell recorded while holding
it (epoch seconds) and how long it waited, so "never two cells on one device's gate at
once" is checked from the holders' own words: no cell took the gate while another said
it held it (:func:`closed`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator

import attrs

from zl_core.interface import contract

#: The gate file a pipelined cell takes before it times; unset, the cell takes no gate
#: (its lane's device lock already keeps it alone on the device).
ENV = contract.TIMING_GATE
#: Where the record goes in the cell's phase record and in its assembled phases.
KEY = "timing_gate"
SCHEMA = 1
DIGITS = 4


@attrs.define
class TimingGate:
    """A cell's hold on its device's gate: taken on demand, given back once timing ends."""

    path: str
    clock: Callable[[], float] = time.time
    fd: int | None = None
    held: list[list[float]] = attrs.field(factory=list)  # [taken, given back] epoch seconds
    waited_s: float = 0.0

    @classmethod
    def from_env(cls, environ: dict | None = None) -> TimingGate | None:
        path = (os.environ if environ is None else environ).get(ENV, "")
        return cls(path) if path else None

    @property
    def holding(self) -> bool:
        return self.fd is not None

    def enter(self) -> None:
        """Wait for the gate and take it; nothing when this cell holds it already. While it
        waits, :data:`~zl_core.interface.contract.GATE_WAIT_FILE` in the cell folder tells
        the orchestrator so: another cell's timing is no part of this one's timeout."""
        if self.fd is not None:
            return
        asked = self.clock()
        turn = os.environ.get(contract.GATE_TURN, "")
        if turn and not self.held:  # started early: its operator's previous cell goes first
            with _waiting(os.environ.get(contract.CELL_DIR)):
                _await_turn(turn)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                with _waiting(os.environ.get(contract.CELL_DIR)):
                    fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        taken = self.clock()
        self.waited_s += taken - asked
        self.held.append([taken, taken])
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _mark_taken(os.environ.get(contract.CELL_DIR))

    def leave(self) -> None:
        """Give the gate back (the cell's timing is over); a later device phase takes it again."""
        if self.fd is None:
            return
        self.held[-1][1] = self.clock()
        os.close(self.fd)
        self.fd = None

    def record(self) -> dict:
        """What the cell writes under :data:`KEY`: its holds (one still open ends now, and
        ``open`` says so: the orchestrator closes it at the process's exit)."""
        holds = [list(h) for h in self.held]
        if self.fd is not None and holds:
            holds[-1][1] = self.clock()
        return {"schema": SCHEMA, "held": [[round(a, DIGITS), round(b, DIGITS)] for a, b in holds],
                "waited_s": round(self.waited_s, DIGITS), "open": self.fd is not None}


TURN_POLL_S = 0.05


def _await_turn(path: str) -> None:
    """Until the orchestrator writes the turn: go on, or (stop) end this process at once,
    before anything of it ran on the device."""
    while True:
        try:
            with open(path, encoding="utf-8") as turn:
                said = turn.read().strip()
        except FileNotFoundError:
            said = ""
        if said == contract.TURN_GO:
            return
        if said == contract.TURN_STOP:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(contract.TURN_STOPPED_RC)
        time.sleep(TURN_POLL_S)


def _mark_taken(cell_dir: str | None) -> None:
    if cell_dir:
        with contextlib.suppress(OSError), \
                open(os.path.join(cell_dir, contract.GATE_TAKEN_FILE), "w", encoding="utf-8") as mark:
            mark.write(f"{os.getpid()}\n")


@contextlib.contextmanager
def _waiting(cell_dir: str | None) -> Iterator[None]:
    marker = os.path.join(cell_dir, contract.GATE_WAIT_FILE) if cell_dir else None
    if marker is not None:
        try:
            with open(marker, "w", encoding="utf-8") as note:
                note.write(f"{os.getpid()}\n")
        except OSError:
            marker = None  # no folder to say it in: the wait counts as the cell's own time
    try:
        yield
    finally:
        if marker is not None:
            with contextlib.suppress(OSError):
                os.unlink(marker)


def closed(record: object, exited: float | None) -> dict | None:
    """A cell's gate record as the orchestrator keeps it. ``held`` stays the cell's own
    words: from when it took the gate to the last moment it recorded while holding it
    (exact on the cell's clock); a hold the cell never gave back (it keeps the gate until
    it exits, or died holding it) says ``until_exit``, and ``exit_seen`` when the
    orchestrator saw the process gone, which is later than the kernel opened the gate by
    however long the orchestrator took to notice."""
    if not isinstance(record, dict) or not isinstance(record.get("held"), list):
        return None
    holds = [list(h) for h in record["held"] if isinstance(h, list) and len(h) == 2]
    until_exit = bool(record.get("open") and holds)
    return {"schema": SCHEMA, "held": holds, "waited_s": record.get("waited_s"), "open": False,
            "until_exit": until_exit,
            "exit_seen": round(exited, DIGITS) if until_exit and exited is not None else None}
