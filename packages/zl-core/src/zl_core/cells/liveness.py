"""Is a cell still making progress? Both ends of the answer.

Inside the cell, :func:`beat` touches :data:`~zl_core.interface.contract.PROGRESS_FILE` in the
cell folder whenever something happens that output alone would not show (a kernel
compiled, an autotune candidate benchmarked, a timing call returned); at most once a
second, so a tight loop pays a clock read. :func:`arm` makes the cell dump the Python
stacks of all its threads into :data:`~zl_core.interface.contract.STACKS_FILE` when it receives
:data:`~zl_core.interface.contract.STACKS_SIGNAL` (``faulthandler``, so even a thread blocked in
C code is shown where Python called it).

Outside, :class:`Watch` is the orchestrator's view: the last output line or beat,
the longest silence so far (recorded in the identity, the figure a stall window is
chosen from), and whether the window has passed.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import time
from pathlib import Path

import attrs

from zl_core.interface import contract

BEAT_EVERY_S = 1.0

_last_beat = 0.0
_stacks_file = None  # kept open: faulthandler writes to its descriptor from a signal handler


def _cell_dir() -> Path | None:
    value = os.environ.get(contract.CELL_DIR)
    return Path(value) if value else None


def beat() -> None:
    """Say the cell is alive (no-op outside a zl cell; throttled)."""
    global _last_beat
    now = time.monotonic()
    if now - _last_beat < BEAT_EVERY_S:
        return
    _last_beat = now
    cell = _cell_dir()
    if cell is None:
        return
    try:
        (cell / contract.PROGRESS_FILE).touch()
    except OSError:
        pass  # a cell folder gone or read-only: the orchestrator still sees the output


def arm() -> bool:
    """Dump every thread's stack on :data:`~zl_core.interface.contract.STACKS_SIGNAL`; once per process."""
    global _stacks_file
    cell = _cell_dir()
    if cell is None or _stacks_file is not None or not hasattr(faulthandler, "register"):
        return False
    try:
        _stacks_file = open(cell / contract.STACKS_FILE, "a", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return False  # the caller's answer: no stacks file, so none is promised
    faulthandler.register(contract.STACKS_SIGNAL, file=_stacks_file, all_threads=True, chain=False)
    return True


@attrs.define
class Watch:
    """The orchestrator's clock of one cell's progress."""

    cell: Path
    window_s: float | None  # None or 0: no stall window
    last: float = attrs.field(factory=time.time)
    longest_silence_s: float = 0.0

    def output(self) -> None:
        """A line of output arrived (called from the reader thread)."""
        self._seen(time.time())

    def poll(self) -> bool:
        """True once the cell has been silent for the whole window."""
        try:
            beat_at = (self.cell / contract.PROGRESS_FILE).stat().st_mtime
        except OSError:
            beat_at = 0.0  # no beat yet: the window runs from the cell's start
        if beat_at > self.last:
            self._seen(beat_at)
        silent = time.time() - self.last
        self.longest_silence_s = max(self.longest_silence_s, silent)
        window = self.window_s or 0.0
        return bool(window) and silent >= window

    def excuse(self) -> None:
        """The cell is waiting for something zl made it wait for (its device's timing
        gate): that silence is no stall, and no part of the longest silence."""
        self.last = max(self.last, time.time())

    def _seen(self, at: float) -> None:
        self.longest_silence_s = max(self.longest_silence_s, at - self.last)
        self.last = max(self.last, at)


def ask_for_stacks(pid: int) -> None:
    """Signal the process whose stacks are wanted (the guard passes it to the cell)."""
    try:
        os.kill(pid, contract.STACKS_SIGNAL)
    except (ProcessLookupError, PermissionError):
        pass


__all__ = ["BEAT_EVERY_S", "Watch", "arm", "ask_for_stacks", "beat", "signal"]
