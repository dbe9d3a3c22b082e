"""SIGINT, SIGTERM and SIGHUP end a campaign cleanly.

Every running cell registers its process group here. :func:`handling_signals`
installs handlers that kill those groups at once (whatever thread started them),
remember the signal, and raise :class:`Interrupted` in the main thread; lanes ask
:func:`requested` before starting another cell. The command line turns the
exception into one line and exit code 128 + signal number (130, 143, 129).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_lock = threading.Lock()
_groups: set[int] = set()
_received: int | None = None
#: What an interruption says while a campaign's finish is being written: set by its first
#: step and kept between its steps (a signal between two of them cuts the finish too),
#: cleared once the campaign is marked complete.
_finishing = ""


class Interrupted(BaseException):
    """Raised when a signal ends a campaign; its exit code is 128 + the signal number.

    A BaseException, as KeyboardInterrupt is: no ``except Exception`` on its way (a
    plugin's isolation, a best-effort read) can swallow it."""

    def __init__(self, signum: int, detail: str = "") -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}; everything it was running was stopped"
                         + (f"; {detail}" if detail else ""))


def register(pgid: int) -> None:
    with _lock:
        _groups.add(pgid)
    if _received is not None:  # a signal arrived while the cell was starting
        _kill(pgid)


def unregister(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


def requested() -> int | None:
    """The signal that interrupted this process, or None."""
    return _received


def reset() -> None:
    global _received, _finishing
    _received = None
    _finishing = ""


def finishing(detail: str) -> None:
    """From now on an interruption says ``detail`` (how to complete the finish); "" stops it."""
    global _finishing
    _finishing = detail


def run(argv: list[str], *, timeout: float, **popen) -> subprocess.CompletedProcess:
    """``subprocess.run`` (text, output captured) of a helper process, in a session of its
    own that is registered here: an interrupt kills it from whichever thread started it.
    (``subprocess.run`` kills its child only when the exception reaches the thread waiting
    on it, which a worker thread of a pool never sees.) Raises ``TimeoutExpired`` after
    killing a helper that ran past ``timeout``."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True, **popen) as proc:
        register(proc.pid)
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            unregister(proc.pid)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill(pgid: int) -> None:
    # SIGTERM reaches every process of the group, the cell's guard included, which
    # then makes sure (SIGKILL after a grace) that nothing of the group survives.
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGTERM)


def kill_running() -> int:
    with _lock:
        groups = list(_groups)
    for pgid in groups:
        _kill(pgid)
    return len(groups)


def _on_signal(signum: int, _frame) -> None:
    global _received
    first = _received is None
    _received = signum
    kill_running()
    if first:
        raise Interrupted(signum, _finishing)


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """Install the handlers for the duration of a campaign (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    reset()
    for sig in SIGNALS:
        signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        # The signal was this campaign's (its Interrupted carries it): the next command
        # in the same process (an API caller, a long-lived worker) starts uninterrupted.
        reset()
