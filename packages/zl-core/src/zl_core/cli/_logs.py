"""How much zl says, and where: ``-q``/``-v`` and the one logging set-up of a command.

Results (a screen's table, a report, a listing) are printed on stdout by the command
modules. Everything else, progress, notes, warnings and debug detail, is a log record
of a logger named after its module (``logging.getLogger(__name__)``: ``zl_core...``,
``zl_flaggems...``, any ``zl_*`` plugin package), written to stderr by the one handler
:func:`configured` installs for the length of a command:

===========  ==========================================  ==============================
flags        zl's records                                other libraries' records
===========  ==========================================  ==============================
``-qq``      errors                                      warnings
``-q``       warnings and errors                         warnings
(none)       progress (info), warnings, errors           warnings
``-v``       and debug detail                            warnings
``-vv``      the same, each line with time, level, name  everything, debug included
===========  ==========================================  ==============================

``-q`` and ``-v`` count against each other (``-v -q`` is the default), before or after
the command's name. The one-line error a failing command ends with is printed by
:mod:`zl_core.cli` itself and never silenced.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator

from zl_core.foundation.console import COLOR_CHOICES

#: The first name of every logger zl owns: its packages are zl_core, zl_report,
#: zl_flaggems and zl_backend_<vendor> (third parties' included).
FIRST_PARTY_PREFIX = "zl_"

#: ``-v``/``-q`` given before the command's name, and after it (argparse keeps them apart).
_TOP = "verbosity_top"
_SUB = "verbosity_sub"


def add_arguments(parser: argparse.ArgumentParser, *, top: bool, color: bool) -> None:
    """``-q``, ``-v`` (and ``--color`` where the command colours its output) on ``parser``:
    the top-level parser (``top``) or one command's."""
    dest = _TOP if top else _SUB
    g = parser.add_argument_group("output")
    g.add_argument("-q", "--quiet", action="append_const", const=-1, dest=dest,
                   help="say less: only warnings, errors and the results (-qq: errors only); "
                   "progress is not shown")
    g.add_argument("-v", "--verbose", action="append_const", const=1, dest=dest,
                   help="say more: debug detail such as each cell's command line, plugin loading "
                   "and resolved settings (-vv: with times and logger names, other libraries' "
                   "debug records too)")
    if color:
        g.add_argument("--color", choices=COLOR_CHOICES, default=None if not top else "auto",
                       dest="color" if top else "color_sub",
                       help="colour the text report and the progress bar (auto, the default: on a "
                       "terminal only, never when NO_COLOR is set, on a pipe too when FORCE_COLOR "
                       "is; always; never)")


def verbosity(args: argparse.Namespace) -> int:
    """-1 per ``-q``, +1 per ``-v``, wherever they were given."""
    return sum(getattr(args, _TOP, None) or ()) + sum(getattr(args, _SUB, None) or ())


def color(args: argparse.Namespace) -> str:
    """The ``--color`` given after the command's name, else the one before it."""
    return getattr(args, "color_sub", None) or getattr(args, "color", None) or "auto"


def levels(verbosity: int) -> tuple[int, int]:
    """(zl's level, other libraries' level) at ``verbosity``."""
    if verbosity <= -2:
        return logging.ERROR, logging.WARNING
    if verbosity == -1:
        return logging.WARNING, logging.WARNING
    if verbosity == 0:
        return logging.INFO, logging.WARNING
    if verbosity == 1:
        return logging.DEBUG, logging.WARNING
    return logging.DEBUG, logging.DEBUG


def first_party(name: str) -> bool:
    return name.split(".", 1)[0].startswith(FIRST_PARTY_PREFIX)


class _Threshold(logging.Filter):
    """Lets a record through at its owner's level: zl's, or other libraries'."""

    def __init__(self, ours: int, theirs: int) -> None:
        super().__init__()
        self.ours, self.theirs = ours, theirs

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= (self.ours if first_party(record.name) else self.theirs)


class _Stderr(logging.StreamHandler):
    """A handler on whatever ``sys.stderr`` is when a record is written: a progress bar
    that redirects stderr prints the line above itself, and a test's capture sees it."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.__init__ assigns it
        pass


class _Plain(logging.Formatter):
    """The message as zl wrote it; debug detail marked as such."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return f"debug: {text}" if record.levelno < logging.INFO else text


@contextlib.contextmanager
def configured(verbosity: int) -> Iterator[None]:
    """zl's handler and levels for the length of a command, as they were afterwards."""
    ours, theirs = levels(verbosity)
    handler = _Stderr()
    handler.addFilter(_Threshold(ours, theirs))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
                         if verbosity >= 2 else _Plain("%(message)s"))
    root = logging.getLogger()
    before = root.level
    root.addHandler(handler)
    root.setLevel(min(ours, theirs))
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(before)
