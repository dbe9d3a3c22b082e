"""Whether zl's output is coloured: one decision for every coloured output.

The text report (through rich, in zl_report) and the campaign's progress bar ask
:func:`wants_color`. The command line sets the user's ``--color auto|always|never``
once per command (:func:`color_choice`), as it sets up logging; ``auto`` follows the
conventions: ``NO_COLOR`` set and not empty turns colour off (https://no-color.org),
``FORCE_COLOR`` set and not empty turns it on (https://force-color.org), and otherwise
only a terminal gets colour. ``always`` and ``never`` override both variables.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import IO

AUTO, ALWAYS, NEVER = "auto", "always", "never"
COLOR_CHOICES = (AUTO, ALWAYS, NEVER)
NO_COLOR_ENV = "NO_COLOR"
FORCE_COLOR_ENV = "FORCE_COLOR"

_choice = AUTO


@contextlib.contextmanager
def color_choice(choice: str) -> Iterator[None]:
    """``choice`` (one of :data:`COLOR_CHOICES`) for every colour decision inside."""
    global _choice
    if choice not in COLOR_CHOICES:
        raise ValueError(f"colour choice {choice!r} is not one of {', '.join(COLOR_CHOICES)}")
    before, _choice = _choice, choice
    try:
        yield
    finally:
        _choice = before


def wants_color(stream: IO[str] | None) -> bool:
    """Whether output written to ``stream`` is to be coloured."""
    if _choice != AUTO:
        return _choice == ALWAYS
    if os.environ.get(NO_COLOR_ENV):
        return False
    if os.environ.get(FORCE_COLOR_ENV):
        return True
    return is_terminal(stream)


def is_terminal(stream: IO[str] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, OSError, ValueError):  # no isatty, or a closed stream
        return False


@contextlib.contextmanager
def rich_agrees(color: bool) -> Iterator[None]:
    """rich reads NO_COLOR by itself: hide it while rendering what ``--color always``
    asked to colour, so the flag overrides the variable as the convention says."""
    hidden = os.environ.pop(NO_COLOR_ENV, None) if color else None
    try:
        yield
    finally:
        if hidden is not None:
            os.environ[NO_COLOR_ENV] = hidden
