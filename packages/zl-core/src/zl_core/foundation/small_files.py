"""Reading a small file the user named or a campaign holds, bounded.

A path may name anything: ``/dev/zero`` (endless, its size says 0), a named pipe (a read
blocks until a writer comes, maybe never), a folder, or a file of gigabytes. Every file
zl reads whole that a person or another program could have put in its place (a manifest,
a configuration file, a dismiss list, campaign.json) is read here: opened without
blocking, refused unless it is a regular file, and read up to its limit only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from zl_core.foundation.errors import BadInputError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_small(path: str | Path, limit: int, *, what: str = "", hint: str = "") -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; otherwise a
    one-line :class:`BadInputError` naming ``what`` it should have been and ``hint``."""
    tail = f"; {hint}" if hint else ""
    what = f"{what} " if what else ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe opens at once, unread
    except OSError as exc:
        raise BadInputError(f"cannot read {what}{path}: {exc.strerror}{tail}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BadInputError(f"{what}{path} is {kind_of(mode)}, not a file{tail}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise BadInputError(f"cannot read {what}{path}: {exc.strerror}{tail}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise BadInputError(f"{what}{path} is over {_size(limit)}, larger than such a file "
                            f"ever is{tail}")
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"
