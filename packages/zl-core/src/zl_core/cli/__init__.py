"""The ``zl`` command line. Each subcommand lives in its own module of this package
exposing ``add_parser(subparsers)`` and ``run(args) -> int``.

Results go to stdout; progress, notes and warnings are log records on stderr, as many
as ``-q``/``-v`` ask for (:mod:`zl_core.cli._logs`). Errors that zl raises on purpose
print one line on stderr and exit with their code (see ``zl_core.foundation.errors``); a closed
pipe exits quietly.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import NoReturn

from zl_core.app import crash as _crash
from zl_core.app.session import VERSION, Interrupted, command_session, problems_said
from zl_core.cli import _logs
from zl_core.foundation import console
from zl_core.foundation.errors import EXIT_FAILED, EXIT_USAGE, ZlError

COMMANDS = ("backends", "doctor", "telemetry", "ops", "run", "screen", "ab", "report", "compare", "worker",
            "diff", "freeze", "reaccount", "completion")
#: The commands that print colour (the text report, the progress bar): they take --color.
COLOURED = ("screen", "ab", "report", "compare")

log = logging.getLogger(__name__)


class _Parser(argparse.ArgumentParser):
    """argparse that reports misuse on one line with exit code 2, never a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="zl", description="Did a compiler switch change an operator's "
                     "generated code, and did it make it faster or slower?")
    parser.add_argument("--version", action="version", version=f"zl {VERSION}")
    _logs.add_arguments(parser, top=True, color=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        module = importlib.import_module(f"zl_core.cli.{name}")
        module.add_parser(sub)
        _logs.add_arguments(sub.choices[name], top=False, color=name in COLOURED)
    return parser


def main(argv: list[str] | None = None) -> int:
    _never_unprintable()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    def say_problem(problem: str) -> None:
        log.warning("zl %s: %s (its answer is skipped)", args.command, problem)

    with problems_said(say_problem), _logs.configured(_logs.verbosity(args)), \
            console.color_choice(_logs.color(args)):
        log.debug("zl %s %s: %s", VERSION, args.command, " ".join(sys.argv[1:] if argv is None else argv))
        return _run(args)


def _never_unprintable() -> None:
    """A path or an operator's text the terminal's encoding cannot show (a unicode runs
    root under PYTHONIOENCODING=ascii) is printed escaped, never a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or detached stream: nothing to print to
                pass


def _run(args: argparse.Namespace) -> int:
    try:
        # SIGINT/SIGTERM/SIGHUP kill the running cells' process groups and end the
        # command with one line and 128 + the signal's number (zl_core.foundation.interrupts).
        with command_session():
            return int(args.handler(args) or 0)
    except Interrupted as exc:
        print(f"zl {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except ZlError as exc:
        print(f"zl {args.command}: {exc}", file=sys.stderr)
        for line in getattr(exc, "problems", ()):
            print(f"  {line}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"zl {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (zl ... | head): leave quietly.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 0
    except OSError as exc:
        # A full disk or a folder gone mid-campaign: what is written so far stays.
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"zl {args.command}: cannot go on: {exc.strerror or exc}{where}; free space or fix "
              "that folder, then continue with --resume <campaign> (cells finished so far are kept)", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the last guard: one line, the traceback kept
        print(_crash.one_line(args, exc), file=sys.stderr)
        return _crash.EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
