"""Whole marker and note lines printed from inside a pytest cell, at a line start."""

from __future__ import annotations

import sys
from typing import Any


class Emitter:
    """Prints whole lines to the real stdout/stderr, at the start of a line.

    Markers are counted in run.log at line start; printed inside a test under
    pytest's output capture they would only show up when that test fails, and
    printed after pytest's progress text (``test_x.py ``) they would not start a line.
    """

    def __init__(self, config: Any = None):
        self._config = config

    def _plugin(self, name: str) -> Any:
        try:
            return self._config.pluginmanager.getplugin(name) if self._config is not None else None
        except Exception:  # noqa: BLE001 - cosmetic: the line is printed without that plugin's help
            return None

    def emit(self, line: str, err: bool = False) -> None:
        disabled = getattr(self._plugin("capturemanager"), "global_and_fixture_disabled", None)
        if disabled is None:
            self._print(line, err)
            return
        with disabled():
            self._print(line, err)

    def _print(self, line: str, err: bool) -> None:
        ensure_newline = getattr(self._plugin("terminalreporter"), "ensure_newline", None)
        if callable(ensure_newline):
            try:
                ensure_newline()
            except Exception:  # noqa: BLE001 - cosmetic: the line is printed anyway
                pass
        stream = sys.stderr if err else sys.stdout
        stream.write(line + "\n")
        stream.flush()
