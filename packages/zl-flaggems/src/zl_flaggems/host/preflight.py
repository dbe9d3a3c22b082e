"""Preflight checks shared by the FlagGems provider and the built-in suite provider.

Each ``check_*`` function returns quietly or raises :class:`PreflightError` with the
check's name and a message that says what to do about it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from zl_core.foundation.errors import PreflightError
from zl_core.interface.provider import CellRequest

BENCH_DIR = "benchmark"
LEVELS = ("core", "comprehensive")
PROBE_PREFIX = "ZL_PROBE "


def check_level(request: CellRequest) -> None:
    if request.level not in LEVELS:
        raise PreflightError("bench_level", f"level {request.level!r} is not one of "
                             f"{', '.join(LEVELS)}")


def default_node(request: CellRequest) -> str:
    """The cell's pytest node: the one given, else ``benchmark/test_<op_file>.py::test_<op>``."""
    if request.test_node:
        return request.test_node
    return f"{BENCH_DIR}/test_{request.op.op_file}.py::test_{request.op.function}"


def node_parts(node: str, root: Path, missing_hint: Callable[[], str]) -> tuple[Path, str]:
    """The node's file (checked to exist) and its function name (may be empty).

    ``missing_hint`` is called only when the file does not exist; what it returns
    ends the message (empty, or starting with "; ").
    """
    if node.startswith("-") or any(c in node for c in "\n\r\0"):
        raise PreflightError("benchmark_file", f"malformed test node {node!r}; "
                             "use benchmark/test_<file>.py::test_<function>")
    file_half, _, rest = node.partition("::")
    path = Path(file_half)
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        raise PreflightError("benchmark_file", f"benchmark file does not exist: {path}{missing_hint()}")
    func = rest.split("::")[-1].split("[", 1)[0] if rest else ""
    return path, func


def check_shape_file(path: Path | None) -> None:
    """A shape file (None: none used) must exist and map names to ``{shapes: [...]}``."""
    if path is None:
        return
    if not path.is_file():
        raise PreflightError("shape_file", f"shape file does not exist: {path}")
    try:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - any parse problem is this check's failure
        first = " ".join(str(exc).split())[:200]
        raise PreflightError("shape_file", f"shape file is not valid YAML: {path}: {first}") from None
    if not isinstance(data, dict):
        raise PreflightError("shape_file", f"shape file {path} must map op or class names to "
                             "{shapes: [...], shape_desc: ...}")
    bad = [str(k) for k, v in data.items()
           if isinstance(v, dict) and "shapes" in v and not isinstance(v["shapes"], list)]
    if bad:
        raise PreflightError("shape_file", f"shape file {path}: 'shapes' must be a list under "
                             f"{', '.join(bad[:5])}")


def check_replay(request: CellRequest, record: str) -> None:
    """Autotune replay needs a cell folder holding ``record`` (relative to it; a
    trailing "/" names a folder, anything else a file)."""
    if request.replay_from is None:
        if request.autotune_mode == "replay":
            raise PreflightError("replay_dir", "autotune mode replay needs the cell to replay "
                                 "from (--replay-from <cell dir>)")
        return
    src = Path(request.replay_from)
    if not src.is_dir():
        raise PreflightError("replay_dir", f"replay run directory does not exist: {src}")
    target = src / record
    if not (target.is_dir() if record.endswith("/") else target.is_file()):
        raise PreflightError("replay_dir", f"{src} has no {record}; replay from a cell that ran "
                             "with autotune mode record")


def shown_python(python: str) -> str:
    """The interpreter as messages name it: a bare name says where PATH finds it."""
    return python if os.path.isabs(python) else f"{python} ({shutil.which(python) or 'not on PATH'})"


def run_probe(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str], timeout_s: float,
              shown: str, needs: str, timed_out: str, failed: str) -> dict:
    """Run an import probe (``argv[0]`` is the interpreter) and return what it printed
    after ``ZL_PROBE``.

    Raises "interpreter": the interpreter is missing (``--python`` hint naming
    ``needs``), it ran past ``timeout_s`` (``timed_out``), it could not start, or it
    failed or printed no probe (``failed``, then the last line it wrote).
    """
    try:
        proc = subprocess.run(list(argv), cwd=cwd, env=dict(env), capture_output=True, text=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise PreflightError("interpreter", f"python interpreter not found: {shown}; pass "
                             f"--python <interpreter with {needs}>") from None
    except subprocess.TimeoutExpired:
        raise PreflightError("interpreter", timed_out) from None
    except OSError as exc:
        raise PreflightError("interpreter", f"cannot run {shown}: {exc}") from None
    probe = read_probe(proc.stdout, PROBE_PREFIX)
    if proc.returncode != 0 or probe is None:
        raise PreflightError("interpreter", f"{failed}: {last_line(proc)}")
    return probe


def read_probe(stdout: str, prefix: str) -> dict | None:
    """The JSON a probe printed after ``prefix`` (its last such line), or None."""
    probe = None
    for line in stdout.splitlines():
        if line.startswith(prefix):
            try:
                probe = json.loads(line[len(prefix):])
            except ValueError:
                probe = None
    return probe


def last_line(proc: subprocess.CompletedProcess) -> str:
    """What a failed probe said last (stderr, else stdout), else its exit status."""
    lines = [ln.strip() for ln in (proc.stderr or proc.stdout or "").splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"
