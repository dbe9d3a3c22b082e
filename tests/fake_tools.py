"""Fake vendor tools for tests: an executable on PATH that prints a recorded output.

The outputs themselves are real vendor output (see each test for its source); only
the program printing them is fake. Every call's argv is appended to ``calls.jsonl``
beside the tool, so tests can check what zl ran.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

_SCRIPT = """#!{python}
import json, sys
with open({calls!r}, "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
with open({stdout!r}) as out:
    sys.stdout.write(out.read())
sys.stderr.write({stderr!r})
sys.exit({rc})
"""


def write_tool(bin_dir: Path, name: str, stdout: str = "", *, rc: int = 0, stderr: str = "") -> Path:
    """Create ``bin_dir/name`` printing ``stdout`` (and ``stderr``), exiting ``rc``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    data = bin_dir / f".{name}.stdout"
    data.write_text(stdout)
    tool = bin_dir / name
    tool.write_text(_SCRIPT.format(python=sys.executable, calls=str(bin_dir / "calls.jsonl"),
                                   stdout=str(data), stderr=stderr, rc=rc))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return tool


def calls(bin_dir: Path) -> list[list[str]]:
    """The argv (without the program) of every call made to tools in ``bin_dir``."""
    log = bin_dir / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def path_with(bin_dir: Path) -> str:
    """PATH with only ``bin_dir`` in front of the system directories (no real vendor
    tool from the test machine can answer instead of the fake)."""
    return os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
