"""The processes a test started, found by a token only they carry (the test's own tmp
path, which their environment or command line holds), never by what any process of the
machine happens to run: another job's `sleep 600` must not fail a test."""

from __future__ import annotations

import os
from pathlib import Path


def holding(token: str | Path) -> list[int]:
    """Pids of live processes (this user's, whose /proc entries can be read) whose
    environment or command line contains ``token``; the test's own process aside."""
    needle = str(token).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().split(") ", 1)[-1].startswith("Z"):
                continue  # a zombie has ended; only its exit status is left to collect
            data = (entry / "environ").read_bytes() + b"\0" + (entry / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile, or another user's
        if needle in data:
            found.append(int(entry.name))
    return found
