"""Write a file so that a reader never sees half of it: write a sibling, then rename.

A rename within one folder is atomic on POSIX, so a killed writer leaves either the
old file or the new one, never a truncated mix. Every module that rewrites a file
others may read while it runs (campaign tables, identities, indexes, records) uses
this one function.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path


def _sibling(name: str) -> str:
    return f".{name}.{os.getpid()}.tmp"


def leftover_of(name: str, sibling: str) -> bool:
    """Whether ``sibling`` is what a writer of ``name`` killed before its rename left
    behind (so the folder was being written, though ``name`` is not there yet)."""
    return sibling.startswith(f".{name}.") and sibling.endswith(".tmp")


def write_text_atomic(path: str | Path, text: str, *, mode: int | None = None) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) in one rename, creating its folder; returns the
    path. ``mode``: the file's permissions, set before the rename (so the file is never
    seen with others)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(_sibling(path.name))
    try:
        tmp.write_text(text, encoding="utf-8")
        if mode is not None:
            tmp.chmod(mode)
        tmp.replace(path)
    finally:
        if tmp.exists():  # the write failed before the rename: leave no stray sibling
            tmp.unlink()
    return path


def write_json_atomic(path: str | Path, data: object, *, indent: int | None = 2,
                      sort_keys: bool = False, allow_nan: bool = True,
                      default: Callable[[object], object] | None = str) -> Path:
    """``data`` as JSON with one trailing newline, written atomically. Values JSON has no
    form for go through ``default`` (``str``; None: raise TypeError, as strict writers want)."""
    return write_text_atomic(path, json_text(data, indent=indent, sort_keys=sort_keys,
                                             allow_nan=allow_nan, default=default))


def json_text(data: object, *, indent: int | None = 2, sort_keys: bool = False, allow_nan: bool = True,
              default: Callable[[object], object] | None = str) -> str:
    """The exact text :func:`write_json_atomic` writes for ``data`` (so it can be hashed first)."""
    return json.dumps(data, indent=indent, sort_keys=sort_keys, default=default, allow_nan=allow_nan) + "\n"
