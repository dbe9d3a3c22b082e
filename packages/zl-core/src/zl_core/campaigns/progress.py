"""Progress of a campaign: a rich bar on a terminal, numbered plain lines otherwise."""

from __future__ import annotations

import sys


class Progress:
    """A progress display on a terminal, plain lines otherwise."""

    def __init__(self, total: int, title: str, *, stream=None) -> None:
        self._stream = stream or sys.stdout
        self._rich = None
        self.total = total
        self.done = 0
        if hasattr(self._stream, "isatty") and self._stream.isatty():
            try:
                from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as RichProgress

                self._rich = RichProgress(TextColumn("{task.description}"), BarColumn(),
                                          TextColumn("{task.completed}/{task.total} cells"),
                                          TimeElapsedColumn(), transient=False)
                self._task = self._rich.add_task(title, total=total)
                self._rich.start()
            except Exception:  # noqa: BLE001 - no rich, or not a real terminal: plain lines
                self._rich = None
        if self._rich is None:
            self.line(f"{title}: {total} cells planned")

    def line(self, text: str) -> None:
        if self._rich is not None:
            self._rich.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self._stream, flush=True)

    def advance(self, text: str) -> None:
        self.done += 1
        if self._rich is not None:
            self._rich.update(self._task, advance=1)
            self._rich.console.print(text, markup=False, highlight=False)
        else:
            self.line(f"[{self.done}/{self.total}] {text}")

    def grow(self, n: int) -> None:
        self.total += n
        if self._rich is not None:
            self._rich.update(self._task, total=self.total)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
