"""FlagGems' printed result table, read back from a cell's ``run.log``.

``results.json`` (written by :mod:`zl_flaggems.cell.plugins.results`) is the primary
source of a cell's rows. Older runs, and cells whose results plugin did not load,
only have the table FlagGems prints; it is parsed here, tolerating ANSI colour,
``N/A`` values, optional TFLOPS/GBPS columns and a log cut off mid-line by a
killed process.

A row parsed from the table carries no per-row timer: the table does not say
which rows fell back from graph capture. :func:`read_cell` recovers the timer
from the cell identity where that is unambiguous and leaves it ``None``
(unknown) otherwise; pairing keeps unknown-timer rows apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from zl_core.foundation.errors import BadInputError
from zl_core.interface import contract
from zl_core.interface.caliber import read_identity
from zl_core.interface.rows import FAILED, LOG_NAME, RESULTS_NAME, CellRows, Row, bare_dtype, read_results

FALLBACK_MARKER = contract.BENCHMARK_DIRECT_NO_CUDAGRAPH

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# FlagGems: "Operator: {op}  Performance Test (dtype={dtype}, mode={mode},level={level})".
# "Performance Test" is optional so hand-written and reformatted titles still parse.
_TITLE = re.compile(r"Operator:\s*(?P<op>\S+)\s+(?:Performance Test\s*)?\((?P<params>[^)]*)\)")
_COLUMNS = re.compile(r"^\s*Status\s{2,}.*Size Detail\s*$")
_DATA = re.compile(r"^(?P<status>SUCCESS|FAILED)\s+(?P<rest>.*)$")
# The red input-generation failure: FAILED: Operator=<op> dtype=<dtype> err=<<<...>>>
_INPUT_FAIL = re.compile(
    r"^FAILED:\s*Operator=(?P<op>\S+)\s+dtype=(?P<dtype>\S*)\s+err=<<<(?P<err>.*)$")
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:inf|nan)$", re.IGNORECASE)
_DEFAULT_NUMERIC = ("Torch Latency (ms)", "Gems Latency (ms)", "Gems Speedup")
_OPEN_CLOSE = {"[": "]", "(": ")", "{": "}"}


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def parse_table(text: str, *, timer: str | None = None) -> list[Row]:
    """Rows of every FlagGems result table in ``text`` (a run.log), in printed order.

    Each ``Operator:`` title starts a table and sets op and dtype; the column
    header that follows says how many numeric columns precede "Size Detail".
    A last line without its newline is a half-written line and is dropped.
    """
    text = strip_ansi(text).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and not text.endswith("\n"):
        lines = lines[:-1]  # cut off mid-line: never trust the tail
    rows: list[Row] = []
    op, dtype = "", ""
    numeric: tuple[str, ...] = _DEFAULT_NUMERIC
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        title = _TITLE.search(line)
        if title:
            op = title.group("op")
            dtype = bare_dtype(_params(title.group("params")).get("dtype"))
            numeric = _DEFAULT_NUMERIC
            continue
        if _COLUMNS.match(line):
            labels = [c.strip() for c in re.split(r"\s{2,}", line.strip()) if c.strip()]
            numeric = tuple(labels[1:-1]) or _DEFAULT_NUMERIC
            continue
        failed = _INPUT_FAIL.match(line.strip())
        if failed:
            err = failed.group("err")
            while ">>>" not in err and i < len(lines):  # the exception text may span lines
                err += "\n" + lines[i]
                i += 1
            if ">>>" not in err:
                continue  # the log ended inside the message
            fail_dtype = failed.group("dtype")
            rows.append(Row(
                op=failed.group("op"),
                # HEAD FlagGems prints the literal "dtype={dtype}"; use the table's then.
                dtype=dtype if "{" in fail_dtype else bare_dtype(fail_dtype),
                size_detail="", latency_ms=None,
                extra=(("torch_latency_ms", None), ("speedup", None)),
                status=FAILED, timer=timer, fallback=False, source=LOG_NAME,
                error=err.split(">>>", 1)[0].strip() or "input generation failed"))
            continue
        data = _DATA.match(line.strip())
        if data and op:
            row = _data_row(data, op, dtype, numeric, timer)
            if row is not None:
                rows.append(row)
    return rows


def _params(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _data_row(match: re.Match, op: str, dtype: str, numeric: tuple[str, ...],
              timer: str | None) -> Row | None:
    parts = match.group("rest").split(None, len(numeric))
    if len(parts) != len(numeric) + 1:
        return None  # too few fields: a truncated or foreign line
    values: list[float | None] = []
    for token in parts[:-1]:
        if token.upper() == "N/A":
            values.append(None)
        elif _NUMBER.match(token):
            values.append(float(token))
        else:
            return None
    size_detail = parts[-1].strip()
    if not _balanced(size_detail):
        return None
    by_name = dict(zip(numeric, values, strict=True))
    torch_ms = _pick(by_name, "torch latency")
    gems_ms = _pick(by_name, "gems latency")
    speedup = _pick(by_name, "speedup")
    known = {k for k in numeric if any(w in k.lower() for w in ("latency", "speedup"))}
    return Row(
        op=op, dtype=dtype, size_detail=size_detail,
        latency_ms=gems_ms, status=match.group("status"), timer=timer, fallback=False,
        source=LOG_NAME,
        # FlagGems' own numbers, under results.json's names for the two it writes there
        extra=(("torch_latency_ms", torch_ms), ("speedup", speedup),
               *((k, v) for k, v in by_name.items() if k not in known)),
    )


def _pick(by_name: dict[str, float | None], needle: str) -> float | None:
    for name, value in by_name.items():
        if needle in name.lower():
            return value
    return None


def _balanced(text: str) -> bool:
    """False when brackets are left open: the line was cut inside the size detail."""
    stack = []
    for ch in text:
        if ch in _OPEN_CLOSE:
            stack.append(_OPEN_CLOSE[ch])
        elif ch in _OPEN_CLOSE.values() and (not stack or stack.pop() != ch):
            return False
    return not stack


def count_marker(text: str, marker: str) -> int:
    return len(re.findall(rf"(?:^|\s){re.escape(marker)}\b", strip_ansi(text), re.MULTILINE))


def read_cell(cell_dir: Path) -> CellRows:
    """The rows of one cell directory: its results.json, else the table in its run.log."""
    cell_dir = Path(cell_dir)
    log = cell_dir / LOG_NAME
    if (cell_dir / RESULTS_NAME).is_file() or not log.is_file():
        return read_results(cell_dir)
    try:
        identity = read_identity(cell_dir)
    except BadInputError:
        identity = None  # the caliber check reports it; rows do not depend on it
    text = log.read_text(encoding="utf-8", errors="replace")
    fallbacks = count_marker(text, FALLBACK_MARKER)
    timer, notes = _log_timer(identity, fallbacks)
    rows = parse_table(text, timer=timer)
    markers = {FALLBACK_MARKER: fallbacks}
    return CellRows(cell_dir=cell_dir, rows=tuple(rows), source=LOG_NAME if rows else None,
                    identity=identity, markers=markers,
                    notes=(*notes, f"{cell_dir}: rows parsed from the printed table"))


class PrintedTableRows:
    """Mixin for providers whose benchmarks print FlagGems' table: their
    :meth:`~zl_core.interface.provider.Provider.read_rows`."""

    def read_rows(self, cell_dir: Path) -> CellRows:
        return read_cell(cell_dir)


def _log_timer(identity: Mapping[str, object] | None, fallbacks: int) -> tuple[str | None, list[str]]:
    """The timer of every table row, when the identity and the markers pin it down.

    A direct-timed cell is direct throughout. A graph-timed cell with no
    fallback marker captured every row. With fallback markers the table cannot
    say which rows fell back, so the timer stays unknown.
    """
    timer = (identity or {}).get("timer")
    if timer == "direct":
        return "direct", []
    if timer == "graph" and fallbacks == 0:
        return "graph", []
    if timer == "graph":
        note = (f"{fallbacks} graph-capture fallback(s) in {LOG_NAME}; the printed table "
                "does not say which rows, so their timer is unknown")
        return None, [note]
    return None, []
