"""No cell outlives its orchestrator: every cell runs under a small guard process.

``spawn`` starts ``python -m zl_core.cells.cellguard`` as the leader of a new session;
the guard starts the cell in its own process group and waits. The guard ends the
whole group (SIGTERM, then SIGKILL after a grace) when

* the orchestrator dies, however it dies: the guard reads the far end of a pipe
  whose only writer is the orchestrator, and sees end-of-file when the kernel
  closes it (portable), and on Linux it also asks for a parent-death signal
  (``PR_SET_PDEATHSIG``), which arrives without waiting for a poll;
* it receives SIGTERM, SIGINT or SIGHUP (the orchestrator's timeout or its own
  interruption kill the group; the guard makes sure nothing is left).

The stacks signal (:data:`~zl_core.interface.contract.STACKS_SIGNAL`) is passed on to the cell,
which dumps its Python stacks (:mod:`zl_core.cells.liveness`).

A device lock descriptor (``hold_fd``) is passed down to the cell itself, so a
cell that somehow survives still holds its device (see :mod:`zl_core.cells.devicelock`).
The guard exits the way the cell did: with its code, or by the same signal.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from zl_core.interface.contract import STACKS_SIGNAL

GRACE_S = 2.0
POLL_S = 0.05
_PR_SET_PDEATHSIG = 1
_TEARDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_pipe_lock = threading.Lock()
_watch_read: int | None = None  # the read end every guard inherits; the write end never leaves us
_watch_pid: int | None = None


def watch_fd() -> int:
    """One watchdog pipe per orchestrator process (re-made after a fork)."""
    global _watch_read, _watch_pid
    with _pipe_lock:
        if _watch_read is None or _watch_pid != os.getpid():
            read, _write = os.pipe()  # both close-on-exec: no cell inherits the write end
            _watch_read, _watch_pid = read, os.getpid()
        return _watch_read


def spawn(argv: Sequence[str], *, cwd: str | Path, env: Mapping[str, str], stdout,
          hold_fd: int | None = None, zygote: str | None = None) -> subprocess.Popen:
    """Start ``argv`` under a guard; the returned process is the guard (its pid is the group).

    With ``zygote`` (a :mod:`zl_core.cells.zygote` socket) the cell is forked from that warm
    parent instead of started anew; the guard stands for it in every other respect."""
    watch = watch_fd()
    warm = [] if zygote is None else ["--warm", zygote]
    guard = [sys.executable, "-m", "zl_core.cells.cellguard", str(os.getpid()), str(watch),
             str(-1 if hold_fd is None else hold_fd), *warm, "--", *argv]
    fds = (watch,) if hold_fd is None else (watch, hold_fd)
    return subprocess.Popen(guard, cwd=str(cwd), env=dict(env), stdout=stdout,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, pass_fds=fds)


# -- the guard program ------------------------------------------------------------------


def _ask_parent_death_signal() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGHUP), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watchdog pipe alone covers it


class _WarmCell:
    """A cell forked by a zygote: not our child, so it is ended, signalled and awaited
    through its own process group and the zygote's connection."""

    def __init__(self, socket_path: str, command: list[str], hold: int) -> None:
        from zl_core.cells import zygote

        self._conn = zygote.request_cell(socket_path, command, os.getcwd(), sys.stdout.fileno(),
                                            None if hold < 0 else hold)
        self._buffer = b""
        self.returncode: int | None = None
        first = self._message(None)
        if "pid" not in first:
            raise OSError(0, first.get("error", "the zygote did not start the cell"))
        self.pid = int(first["pid"])

    def fileno(self) -> int:
        return self._conn.fileno()

    def _message(self, timeout: float | None) -> dict:
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._conn], [], [], timeout)
            if not ready:
                return {}
            chunk = self._conn.recv(4096)
            if not chunk:  # the zygote died: the cell cannot report its end
                self.send_signal(signal.SIGKILL)
                return {"exit": 1}
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        import json

        return json.loads(line)

    def poll(self) -> int | None:
        if self.returncode is None:
            message = self._message(0)
            if "exit" in message:
                self.returncode = int(message["exit"])
        return self.returncode

    def wait(self, timeout: float) -> int:
        if self.returncode is None:
            message = self._message(timeout)
            if "exit" not in message:
                raise subprocess.TimeoutExpired("warm cell", timeout)
            self.returncode = int(message["exit"])
        return self.returncode

    def send_signal(self, sig: int) -> None:
        for kill in (os.killpg, os.kill):  # its group once it has one, else the process
            try:
                kill(self.pid, sig)
                return
            except OSError:
                continue


def _teardown(child: subprocess.Popen | _WarmCell | None) -> None:
    """End every process of our group (and a warm cell's own group), the guard last."""
    for sig in _TEARDOWN_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if isinstance(child, _WarmCell):
        child.send_signal(signal.SIGTERM)
    try:
        os.killpg(0, signal.SIGTERM)
    except OSError:
        pass  # the group is gone already: nothing left to end
    if child is not None:
        try:
            child.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    if isinstance(child, _WarmCell):
        child.send_signal(signal.SIGKILL)
    os.killpg(0, signal.SIGKILL)


def _exit_like(returncode: int) -> None:
    if returncode < 0:
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    os._exit(returncode if returncode >= 0 else 128 - returncode)


def guard_main(argv: list[str]) -> None:
    parent, watch, hold = int(argv[0]), int(argv[1]), int(argv[2])
    zygote = argv[4] if argv[3] == "--warm" else None
    command = argv[argv.index("--", 3) + 1:]
    child: subprocess.Popen | _WarmCell | None = None

    def on_signal(_signum, _frame) -> None:
        _teardown(child)

    def pass_on(signum, _frame) -> None:
        if child is not None:  # the cell dumps its stacks (zl_core.cells.liveness); we are no Python stack
            try:
                os.kill(child.pid, signum)  # the cell alone: its compilers keep going
            except OSError:
                pass  # the cell has ended: it has no stacks left to dump

    for sig in _TEARDOWN_SIGNALS:
        signal.signal(sig, on_signal)
    signal.signal(STACKS_SIGNAL, pass_on)
    _ask_parent_death_signal()
    if os.getppid() != parent:  # the orchestrator died before the death signal was armed
        _teardown(None)
    try:
        if zygote is not None:
            child = _WarmCell(zygote, command, hold)
        else:
            child = subprocess.Popen(command, pass_fds=() if hold < 0 else (hold,))
    except OSError as exc:
        where = "the warm start's zygote" if zygote is not None else command[0]
        print(f"CELL_START_FAILED {where}: {exc.strerror}", flush=True)
        os._exit(127)
    # The zygote's connection (warm), or a pidfd (Linux >= 5.3), turns the cell's exit
    # into a readable descriptor, so the guard wakes at once; elsewhere it polls.
    try:
        watched: list[int | _WarmCell] = [watch, child if isinstance(child, _WarmCell) else os.pidfd_open(child.pid)]
        tick = None
    except (AttributeError, OSError):
        watched, tick = [watch], POLL_S
    while True:
        ready, _, _ = select.select(watched, [], [], tick)
        if watch in ready and not os.read(watch, 1):  # end-of-file: the orchestrator is gone
            _teardown(child)
        code = child.poll()
        if code is not None:
            _exit_like(code)


if __name__ == "__main__":
    guard_main(sys.argv[1:])
