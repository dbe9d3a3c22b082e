"""The last guard of every command: an exception nothing else caught (a bug of zl or of a
plugin) becomes one line and exit code 70, never a traceback on the user's terminal.
The traceback is kept in a file the line names, for a report: under the runs root when
it exists (``zl-errors/``), else under zl's cache folder."""

from __future__ import annotations

import argparse
import os
import traceback
from pathlib import Path

from zl_core.foundation.compiler_build import cache_dir
from zl_core.foundation.stamps import folder_stamp

#: sysexits' EX_SOFTWARE: an internal error, which no user input explains.
EXIT_INTERNAL = 70
ERRORS_DIR = "zl-errors"


def keep_traceback(args: argparse.Namespace, exc: BaseException) -> Path | None:
    """Write ``exc``'s traceback to a new file; its path, or None when none could be written."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    name = f"{folder_stamp()}-{os.getpid()}-{args.command}.txt"
    for folder in _folders(args):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(f"zl {args.command}\n{text}", encoding="utf-8")
            return path
        except OSError:
            continue
    return None


def _folders(args: argparse.Namespace) -> list[Path]:
    runs = getattr(args, "runs_root", None) or os.environ.get("ZL_RUNS_ROOT") or "runs"
    out = [Path(runs) / ERRORS_DIR] if Path(runs).is_dir() else []
    try:
        out.append(cache_dir() / "errors")
    except (OSError, RuntimeError):  # no home folder to find the cache in
        pass
    return out


def one_line(args: argparse.Namespace, exc: BaseException) -> str:
    kept = keep_traceback(args, exc)
    where = f"its traceback is in {kept}" if kept else "its traceback could not be written anywhere"
    what = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return (f"zl {args.command}: internal error ({what}); {where}: please report it with that "
            "file (a campaign left unfinished continues with --resume)")
