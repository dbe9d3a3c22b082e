"""Measurement rows of one cell, as the core reads them.

A :class:`Row` is provider-neutral. ``results.json`` is zl's own structured
format (schema 1: ``{"op", "rows": [...], "markers": {...}}``; a row's latency is
``latency_ms``, written ``gems_latency_ms`` before it had a neutral name and read under
either) and is read here; a cell without it is read by its provider
(:meth:`zl_core.interface.provider.Provider.read_rows`), which knows what its benchmarks
print (a table, for instance). Finding that provider takes the plugin host,
so it is done a layer up, in :mod:`zl_core.plugins.cell_rows`; this module imports neither.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from zl_core.foundation.errors import BadInputError
from zl_core.interface.caliber import read_identity

RESULTS_NAME = "results.json"
LOG_NAME = "run.log"
SUCCESS = "SUCCESS"
FAILED = "FAILED"
TIMERS = ("graph", "direct")


#: A row's latency in results.json, and the name it was written under before.
LATENCY_KEY = "latency_ms"
LATENCY_KEY_BEFORE = "gems_latency_ms"


@attrs.frozen(kw_only=True, init=False)
class Row:
    """One measured (or failed) case of one operator in one cell.

    ``gems_latency_ms=``, the name ``latency_ms`` had before it was neutral, is still
    taken (it sets ``latency_ms``) and read (:attr:`gems_latency_ms`), so providers
    written to it keep working."""

    op: str
    dtype: str  # without the "torch." prefix
    size_detail: str  # the shape, exactly as the provider prints it
    latency_ms: float | None  # the operator's latency, the one every verdict judges
    status: str  # SUCCESS | FAILED
    timer: str | None  # "graph" | "direct" | None when unknown
    fallback: bool  # meant to be graph-timed, fell back to direct
    source: str  # "results.json" | "run.log"
    error: str | None = None
    #: (max - min) / median of the graph replays of the latency: the spread
    #: inside the cell, None when the row was not graph-timed.
    replay_spread_pct: float | None = None
    #: The provider's own numbers, by its name for each, kept apart from the neutral
    #: fields above: a reference latency, its own speedup over that reference,
    #: throughput columns. The core judges none of them; a report may show them.
    extra: tuple[tuple[str, float | None], ...] = ()

    def __init__(self, *, gems_latency_ms: float | object | None = attrs.NOTHING, **fields: Any) -> None:
        if gems_latency_ms is not attrs.NOTHING:  # the earlier name of latency_ms: it wins when given
            fields["latency_ms"] = gems_latency_ms
        self.__attrs_init__(**fields)

    @property
    def gems_latency_ms(self) -> float | None:
        """``latency_ms``, under its earlier name (providers written to it read this)."""
        return self.latency_ms

    def provider_value(self, name: str) -> float | None:
        """One of the provider's own numbers (None when the row has none of that name)."""
        return dict(self.extra).get(name)

    def to_json(self) -> dict:
        data = attrs.asdict(self)
        data["extra"] = dict(self.extra)
        return data


#: The fields of a results.json row the core reads itself; every other number is the
#: provider's own (``Row.extra``), as its plugin wrote it.
NEUTRAL_FIELDS = ("op", "dtype", "size_detail", LATENCY_KEY, LATENCY_KEY_BEFORE, "status", "timer",
                  "fallback", "error", "replay_spread_pct")


@attrs.frozen(kw_only=True)
class CellRows:
    """A cell's rows plus what is known about where they came from."""

    cell_dir: Path
    rows: tuple[Row, ...]
    source: str | None  # None when the cell has neither results.json nor a table
    identity: Mapping[str, object] | None  # the cell's CellIdentity
    markers: dict[str, int]
    notes: tuple[str, ...] = ()
    #: Why each test of the cell that skipped at run time skipped (``pytest.skip`` in the
    #: benchmark, a ``skipif`` decided at setup, an ``xfail``), as the cell recorded it.
    skips: tuple[str, ...] = ()


def bare_dtype(text: str | None) -> str:
    text = (text or "").strip()
    return text.removeprefix("torch.")


# --------------------------------------------------------------------------- results.json


def _load_results(path: Path) -> object:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInputError(f"corrupt results file {path}: {_one_line(exc)}; "
                            f"re-run the cell or delete it to fall back to {LOG_NAME}") from None


#: How pytest starts a skip's message; the reason follows it.
_SKIP_PREFIX = "Skipped: "


def parse_skips(data: object) -> tuple[str, ...]:
    """The reasons of the tests a results.json records as skipped (its ``tests``: ``node``,
    ``outcome``, ``message``, written by the provider's cell plugin); () when it has none."""
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list):
        return ()
    return tuple(str(t.get("message") or "no reason given").removeprefix(_SKIP_PREFIX)
                 for t in tests if isinstance(t, dict) and t.get("outcome") == "skipped")


def parse_results_json(path: Path) -> tuple[list[Row], dict[str, int]]:
    """Rows and marker counts of one results.json; corrupt content raises BadInputError."""
    path = Path(path)
    return _rows_and_markers(_load_results(path), path)


def _rows_and_markers(data: object, path: Path) -> tuple[list[Row], dict[str, int]]:
    if not isinstance(data, dict) or not isinstance(data.get("rows", []), list):
        raise BadInputError(f"corrupt results file {path}: expected an object with a 'rows' list")
    default_op = str(data.get("op") or "")
    rows = []
    for i, raw in enumerate(data.get("rows", [])):
        if not isinstance(raw, dict):
            raise BadInputError(f"corrupt results file {path}: row {i} is not an object")
        timer = raw.get("timer")
        rows.append(Row(
            op=str(raw.get("op") or default_op),
            dtype=bare_dtype(raw.get("dtype")),
            size_detail=str(raw.get("size_detail", "")),
            latency_ms=_num(raw.get(LATENCY_KEY, raw.get(LATENCY_KEY_BEFORE))),
            status=SUCCESS if raw.get("status") == SUCCESS else FAILED,
            timer=timer if timer in TIMERS else None,
            fallback=bool(raw.get("fallback", False)),
            source=RESULTS_NAME,
            error=None if raw.get("error") in (None, "") else str(raw.get("error")),
            replay_spread_pct=_num(raw.get("replay_spread_pct")),
            extra=tuple((str(k), _num(v)) for k, v in raw.items()
                        if k not in NEUTRAL_FIELDS and (v is None or _num(v) is not None)),
        ))
    markers = data.get("markers")
    return rows, {str(k): _int(v) for k, v in markers.items()} if isinstance(markers, dict) else {}


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):  # JSON's numbers and text
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int(value: object) -> int:
    if not isinstance(value, int | float | str):
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


# --------------------------------------------------------------------------- cells


def read_results(cell_dir: Path) -> CellRows:
    """The rows of a cell's results.json; no rows (and a note) when it has none."""
    cell_dir = Path(cell_dir)
    try:
        identity = read_identity(cell_dir)
    except BadInputError:
        identity = None  # the caliber check reports it; rows do not depend on it
    results = cell_dir / RESULTS_NAME
    if results.is_file():
        data = _load_results(results)
        rows, markers = _rows_and_markers(data, results)
        return CellRows(cell_dir=cell_dir, rows=tuple(rows), source=RESULTS_NAME,
                        identity=identity, markers=markers, skips=parse_skips(data))
    return CellRows(cell_dir=cell_dir, rows=(), source=None, identity=identity, markers={},
                    notes=(f"{cell_dir}: neither {RESULTS_NAME} nor {LOG_NAME}",))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
