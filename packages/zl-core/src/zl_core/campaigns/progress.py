"""Progress of a campaign: log lines, and a rich bar where stderr is a terminal.

Both show cells done/total and an estimate of the time left, from the campaign's own
pace so far (cells finished per second of wall time, so several lanes count). The
lanes executor adds a line whenever a lane starts an operator. Every cell is reported
when it starts (:meth:`Progress.started`: the running cells show in the bar's
description, or as a plain ``running`` line) and when it finishes; what the columns
of a cell line mean is said once per campaign (:meth:`Progress.legend`).

Progress is not a result: every line is an info record of this module's logger
(stderr, silenced by ``-q``), and the bar is drawn only while info records are shown
and stderr is a terminal, coloured as :func:`zl_core.foundation.console.wants_color` says.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Hashable
from typing import TYPE_CHECKING

from zl_core.foundation import console
from zl_core.foundation.formats import duration

if TYPE_CHECKING:
    from rich.console import Console

log = logging.getLogger(__name__)

#: Printed once per campaign, so the cell lines explain themselves.
CELL_LINE_LEGEND = (
    "each cell line: [finished/planned] operator [round] side [switch value] rc=exit code "
    "(124 = timed out, 125 = stalled) rows=measured rows (0 in an IR-only screen: nothing is timed) "
    "ttgir=.ttgir files written (one per kernel variant: shape x config) seconds")


#: The bar's own width in columns, so that the count and the times fit beside it at 80.
BAR_WIDTH = 12


def bar_wanted() -> bool:
    """A bar only where progress is shown at all and a person watches stderr."""
    return log.isEnabledFor(logging.INFO) and console.is_terminal(sys.stderr)


class Progress:
    """A campaign's progress: a bar on a terminal, numbered log lines otherwise."""

    def __init__(self, total: int, title: str, *, bar: bool | None = None,
                 screen: Console | None = None) -> None:
        """``screen``: the rich Console the bar is drawn on (stderr's where None)."""
        self._rich = None
        self._title = title
        self.total = total
        self.done = 0
        self.running: dict[Hashable, str] = {}  # the cells running now, by key
        self._start = time.monotonic()
        if bar_wanted() if bar is None else bar:
            try:
                from rich.console import Console
                from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
                from rich.progress import Progress as RichProgress
                from rich.table import Column

                # Lines logged while the bar is up go to stderr, which rich redirects above
                # the bar; stdout (results) is left alone.
                if screen is None:
                    screen = Console(file=sys.stderr, force_terminal=True,
                                     no_color=not console.wants_color(sys.stderr))
                # The description (the running cells) takes what the count, the bar and the
                # times leave, cut with an ellipsis: at 80 columns they all stay in view.
                described = TextColumn("{task.description}", table_column=Column(
                    ratio=1, no_wrap=True, overflow="ellipsis", min_width=10))
                self._rich = RichProgress(described, BarColumn(bar_width=BAR_WIDTH),
                                          TextColumn("{task.completed}/{task.total} cells"),
                                          TimeElapsedColumn(), TextColumn("eta"),
                                          TimeRemainingColumn(), console=screen, transient=False,
                                          redirect_stdout=False, redirect_stderr=True, expand=True)
                self._task = self._rich.add_task(title, total=total)
                self._rich.start()
            except Exception as exc:  # noqa: BLE001 - no rich, or not a real terminal: plain lines
                log.debug("no progress bar (%s: %s): plain lines", type(exc).__name__, exc)
                self._rich = None
        if self._rich is None:
            self.line(f"{title}: {total} cells planned")

    def line(self, text: str) -> None:
        log.info(text)

    def legend(self) -> None:
        """Say once what the columns of a cell line mean."""
        self.line(CELL_LINE_LEGEND)

    def started(self, key: Hashable, label: str) -> None:
        """A cell's process is starting: say which."""
        self.running[key] = label
        if self._rich is not None:
            self._rich.update(self._task, description=self._description())
        else:
            self.line(f"[{self.done + len(self.running)}/{self.total}] {label} running ...")

    def _description(self) -> str:
        labels = list(self.running.values())
        return f"{self._title} - running: {', '.join(labels)}" if labels else self._title

    def advance(self, text: str, key: Hashable | None = None) -> None:
        self.done += 1
        self.running.pop(key, None)
        if self._rich is not None:
            self._rich.update(self._task, advance=1, description=self._description())
            self.line(text)
        else:
            eta = self.eta_s()
            self.line(f"[{self.done}/{self.total}] {text}"
                      + ("" if eta is None else f" (eta {duration(eta)})"))

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far; None before the first cell or when done."""
        if not self.done or self.done >= self.total:
            return None
        return (time.monotonic() - self._start) / self.done * (self.total - self.done)

    def grow(self, n: int, why: str = "") -> None:
        """``n`` more cells planned (fewer where negative), and why, in the count's words."""
        self.total += n
        if self._rich is not None:
            self._rich.update(self._task, total=self.total)
            if why:
                self.line(why)
        elif why:
            self.line(f"[{self.done}/{self.total}] {why}")

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()



