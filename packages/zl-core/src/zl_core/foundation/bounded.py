"""A call into third-party code that may never return, bounded.

:func:`call_within` runs the call on a daemon thread and waits at most ``seconds`` for
it. A call that does not return in time is abandoned (Python cannot stop a thread; a
daemon thread does not keep the process alive) and :class:`Hung` is raised, so the
caller can name what hung and go on without it. The wait itself is interruptible: a
signal's handler still runs in the main thread and its exception reaches the caller.

The plugin host bounds plugin imports and hook calls this way
(:data:`PLUGIN_TIMEOUT_ENV`, default :data:`DEFAULT_PLUGIN_TIMEOUT_S`).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

PLUGIN_TIMEOUT_ENV = "ZL_PLUGIN_TIMEOUT"
#: A plugin's import or hook that takes longer than this is abandoned and reported. Vendor
#: tools a hook runs are bounded by their own, shorter timeouts (zl_core.foundation.vendor_tools).
DEFAULT_PLUGIN_TIMEOUT_S = 120.0


class Hung(Exception):
    """The call did not return within its bound."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not finish within {seconds:g}s (abandoned; {PLUGIN_TIMEOUT_ENV} sets the bound)")
        self.seconds = seconds


def plugin_timeout() -> float:
    """The bound for plugin imports and hooks: $ZL_PLUGIN_TIMEOUT seconds when it is a
    number > 0, else the default."""
    try:
        value = float(os.environ.get(PLUGIN_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_PLUGIN_TIMEOUT_S
    return value if math.isfinite(value) and value > 0 else DEFAULT_PLUGIN_TIMEOUT_S


def call_within(seconds: float, fn: Callable[[], T], name: str = "zl-bounded") -> T:
    """``fn()``, or :class:`Hung` after ``seconds``; whatever ``fn`` raises is raised here."""
    values: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            values.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            errors.append(exc)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise Hung(seconds)
    if errors:
        raise errors[0]
    return values[0]
