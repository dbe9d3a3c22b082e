"""``zl completion bash|zsh|fish``: a completion script for the shell, on stdout.

The script is written from zl's own argparse parser (:mod:`zl_core.cli._shells`), so
it knows every command and option of the zl that wrote it.
"""

from __future__ import annotations

import argparse
import sys

from zl_core.app.session import VERSION
from zl_core.cli._shells import SHELLS, script


def add_parser(sub) -> None:
    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh, fish)",
                       description="Print the completion script of zl's commands and options for "
                       "SHELL on stdout. bash: source <(zl completion bash); zsh (after compinit): "
                       "source <(zl completion zsh); fish: zl completion fish | source. Save the "
                       "output in the shell's completion folder to load it in every session "
                       "(see docs/usage.md).")
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from zl_core.cli import build_parser  # the whole parser, this command included

    sys.stdout.write(script(args.shell, build_parser(), VERSION))
    return 0
