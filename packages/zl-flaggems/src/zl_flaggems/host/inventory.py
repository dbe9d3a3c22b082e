"""The operators of a FlagGems checkout, read from ``benchmark/test_*.py`` without
importing them: each module-level ``def test_<op>``, an unconditional skip mark over
it, and the dtypes its benchmark runs (:mod:`.bench_dtypes`).

Reading every benchmark file's syntax tree takes a fraction of a second on FlagGems'
~700 files, and a command asks for the listing several times (``--ops`` checks, then
each workload of a manifest), so a listing is kept until a file of the folder changes.
"""

from __future__ import annotations

import re
from pathlib import Path

from zl_core.interface.provider import OpInfo

from zl_flaggems.host.bench_dtypes import BenchDtypes
from zl_flaggems.host.preflight import BENCH_DIR

_TEST_DEF = re.compile(r"^def\s+test_([A-Za-z0-9_]+)\s*\(", re.MULTILINE)
# A decorator block right above a module-level test function; an unconditional skip
# mark in it (not skipif) means the benchmark never runs.
_DECORATED_DEF = re.compile(r"((?:^@[^\n]*\n(?:[ \t)][^\n]*\n)*)+)def\s+test_([A-Za-z0-9_]+)\s*\(",
                            re.MULTILINE)
_SKIP_MARK = re.compile(r"@pytest\.mark\.skip\b(?!if)\s*(?:\((?:\s*reason\s*=\s*)?(['\"])(.*?)\1)?")


def benchmark_files(root: Path) -> list[Path]:
    bench = root / BENCH_DIR
    return sorted(p for p in bench.glob("test_*.py") if p.is_file()) if bench.is_dir() else []


def bench_functions(path: Path) -> list[str]:
    """Module-level ``def test_<name>`` functions of one file, by text (no import)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return _TEST_DEF.findall(text)


def skip_marks(path: Path) -> dict[str, str]:
    """Test functions of one file under an unconditional ``pytest.mark.skip``, with its reason."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    marks = {}
    for block, name in _DECORATED_DEF.findall(text):
        found = _SKIP_MARK.search(block)
        if found:
            marks[name] = found.group(2) or "skipped unconditionally by the benchmark"
    return marks


def _signature(bench: Path) -> tuple:
    """What the listing depends on: every Python file of the folder, by size and time."""
    out = []
    try:
        for path in sorted(bench.glob("*.py")):
            stat = path.stat()
            out.append((path.name, stat.st_size, stat.st_mtime_ns))
    except OSError:
        return ()
    return tuple(out)


class Inventory:
    """Listings of checkouts, each kept while its benchmark folder is unchanged."""

    def __init__(self) -> None:
        self._kept: dict[Path, tuple[tuple, list[OpInfo], tuple[str, ...]]] = {}

    def ops(self, root: Path) -> list[OpInfo]:
        return list(self._read(root)[0])

    def dtype_choices(self, root: Path) -> tuple[str, ...]:
        """The names the checkout's ``--dtypes`` accepts; () where it does not say."""
        return self._read(root)[1]

    def _read(self, root: Path) -> tuple[list[OpInfo], tuple[str, ...]]:
        bench = root / BENCH_DIR
        signature = _signature(bench)
        kept = self._kept.get(root)
        if kept is not None and kept[0] == signature and signature:
            return kept[1], kept[2]
        dtypes = BenchDtypes(bench)
        ops: list[OpInfo] = []
        for path in benchmark_files(root):
            op_file = path.stem[len("test_"):]
            skips = skip_marks(path)
            for name in dict.fromkeys(bench_functions(path)):
                ops.append(OpInfo(op=name, op_file=op_file, skip=skips.get(name, ""),
                                  dtypes=dtypes.runs(op_file, name) or ()))
        ops.sort(key=lambda o: (o.op, o.op_file))
        choices = dtypes.choices() or ()
        self._kept[root] = (signature, ops, choices)
        return ops, choices
