"""Run flush callbacks when the cell process ends, including on SIGTERM.

A cell's timeout sends SIGTERM to its process group; Python's default action
for it skips ``atexit``, so a dump kept only for the end would be lost exactly
when it is most needed. The handler flushes, then hands the signal on to the
handler that was there before (or re-raises it with the default action, so the
exit status still says "killed by SIGTERM"). SIGKILL and hard crashes cannot be
caught; writers therefore also flush periodically (see the plugins).
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from collections.abc import Callable

_FLUSHERS: list[Callable[[], object]] = []
_installed = False
_previous_handler: object = None


def register(flush: Callable[[], object]) -> None:
    """Call ``flush`` at interpreter exit and on SIGTERM (idempotent per callable)."""
    global _installed
    if flush not in _FLUSHERS:
        _FLUSHERS.append(flush)
    if _installed:
        return
    _installed = True
    atexit.register(run_all)
    _install_sigterm()


def unregister(flush: Callable[[], object]) -> None:
    if flush in _FLUSHERS:
        _FLUSHERS.remove(flush)


def run_all() -> None:
    pending = _FLUSHERS.copy()  # a flush may unregister itself
    for flush in pending:
        try:
            flush()
        except Exception:  # noqa: BLE001 - best effort at exit: one failing writer must not stop the others
            pass


def _install_sigterm() -> None:
    global _previous_handler
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still applies
    try:
        previous = signal.getsignal(signal.SIGTERM)
        if previous is signal.SIG_IGN:
            return
        _previous_handler = previous
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        pass


def _on_sigterm(signum: int, frame: object) -> None:
    run_all()
    previous = _previous_handler
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
