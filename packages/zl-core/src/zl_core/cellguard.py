"""No cell outlives its orchestrator: every cell runs under a small guard process.

``spawn`` starts ``python -m zl_core.cellguard`` as the leader of a new session;
the guard starts the cell in its own process group and waits. The guard ends the
whole group (SIGTERM, then SIGKILL after a grace) when

* the orchestrator dies, however it dies: the guard reads the far end of a pipe
  whose only writer is the orchestrator, and sees end-of-file when the kernel
  closes it (portable), and on Linux it also asks for a parent-death signal
  (``PR_SET_PDEATHSIG``), which arrives without waiting for a poll;
* it receives SIGTERM, SIGINT or SIGHUP (the orchestrator's timeout or its own
  interruption kill the group; the guard makes sure nothing is left).

A device lock descriptor (``hold_fd``) is passed down to the cell itself, so a
cell that somehow survives still holds its device (see :mod:`zl_core.devicelock`).
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

GRACE_S = 2.0
POLL_S = 0.05
_PR_SET_PDEATHSIG = 1
_TEARDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_pipe_lock = threading.Lock()
_watch_read: int | None = None  # the read end every guard inherits; the write end never leaves us
_watch_pid: int | None = None


def _watch_fd() -> int:
    """One watchdog pipe per orchestrator process (re-made after a fork)."""
    global _watch_read, _watch_pid
    with _pipe_lock:
        if _watch_read is None or _watch_pid != os.getpid():
            read, _write = os.pipe()  # both close-on-exec: no cell inherits the write end
            _watch_read, _watch_pid = read, os.getpid()
        return _watch_read


def spawn(argv: Sequence[str], *, cwd: str | Path, env: Mapping[str, str], stdout,
          hold_fd: int | None = None) -> subprocess.Popen:
    """Start ``argv`` under a guard; the returned process is the guard (its pid is the group)."""
    watch = _watch_fd()
    guard = [sys.executable, "-m", "zl_core.cellguard", str(os.getpid()), str(watch),
             str(-1 if hold_fd is None else hold_fd), "--", *argv]
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


def _teardown(child: subprocess.Popen | None) -> None:
    """End every process of our group, the guard last."""
    for sig in _TEARDOWN_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    try:
        os.killpg(0, signal.SIGTERM)
    except OSError:
        pass
    if child is not None:
        try:
            child.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    os.killpg(0, signal.SIGKILL)


def _exit_like(returncode: int) -> None:
    if returncode < 0:
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    os._exit(returncode if returncode >= 0 else 128 - returncode)


def guard_main(argv: list[str]) -> None:
    parent, watch, hold = int(argv[0]), int(argv[1]), int(argv[2])
    command = argv[4:]  # argv[3] is "--"
    child: subprocess.Popen | None = None

    def on_signal(_signum, _frame) -> None:
        _teardown(child)

    for sig in _TEARDOWN_SIGNALS:
        signal.signal(sig, on_signal)
    _ask_parent_death_signal()
    if os.getppid() != parent:  # the orchestrator died before the death signal was armed
        _teardown(None)
    try:
        child = subprocess.Popen(command, pass_fds=() if hold < 0 else (hold,))
    except OSError as exc:
        print(f"CELL_START_FAILED {command[0]}: {exc.strerror}", flush=True)
        os._exit(127)
    # A pidfd turns the cell's exit into a readable descriptor (Linux >= 5.3), so the
    # guard wakes at once; elsewhere it polls.
    try:
        watched, tick = [watch, os.pidfd_open(child.pid)], None
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
