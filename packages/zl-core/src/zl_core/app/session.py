"""What every command runs under: the host's problems said as they happen, and
SIGINT/SIGTERM/SIGHUP ending the running cells' process groups (``Interrupted``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from zl_core import __version__
from zl_core.foundation import interrupts
from zl_core.plugins import host as host_module

#: zl's version, as ``zl --version`` and the completion scripts print it.
VERSION = __version__
#: Raised by :func:`command_session` when a signal ended the command (its exit code: 128 + the signal).
Interrupted = interrupts.Interrupted


@contextlib.contextmanager
def problems_said(say: Callable[[str], None]) -> Iterator[None]:
    """``say(problem)`` for every plugin problem the host meets while the command runs."""
    host_module.PROBLEM_LISTENERS.append(say)
    try:
        yield
    finally:
        host_module.PROBLEM_LISTENERS.remove(say)


def command_session() -> contextlib.AbstractContextManager[None]:
    """A command's body: signals kill the running cells' process groups and raise Interrupted."""
    return interrupts.handling_signals()
