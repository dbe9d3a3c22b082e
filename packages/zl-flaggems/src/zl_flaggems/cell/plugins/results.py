"""pytest plugin: ``<cell>/results.json``, one row per row of FlagGems' printed table.

Rows are taken from the very ``BenchmarkResult`` object FlagGems prints: its
``__str__`` is wrapped, so a table that was printed is a table that was
recorded, and nothing else is. ``size_detail`` is formatted exactly as the
table's "Size Detail" column, so JSON rows and run.log rows pair; latencies are
kept at full precision (the table shows them rounded to 6 decimals, speedup to
3). Each row says which timer produced it (from the timing plugin's log).

The file is rewritten atomically after every table, after every test and at
session end (``"complete": true`` only then); a SIGTERM'd cell flushes what it
has with ``"complete": false``.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from typing import Any

import pytest
from zl_core.interface import contract

from zl_flaggems.cell import benchapi, cellenv, crashsafe, markers
from zl_flaggems.cell.rowclock import CLOCK

PLUGIN = "results"
RESULTS_NAME = "results.json"
SCHEMA = 1


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _timing_log() -> list:
    mod = sys.modules.get("zl_flaggems.cell.plugins.timing")
    return getattr(mod, "TIMING_LOG", []) if mod is not None else []


class Collector:
    """Rows, test outcomes and the bookkeeping that maps timed calls to rows."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.tests: dict[str, dict] = {}
        self.complete = False
        self.exitstatus: int | None = None
        self._last_seq = CLOCK.seq
        self._log_pos = len(_timing_log())
        self._occurrence: Counter = Counter()
        self._seen: dict[int, object] = {}

    # -- tables ---------------------------------------------------------------

    def calls_per_row(self, n: int) -> list[list]:
        """The timed calls of each of the last ``n`` rows.

        Exact when the row clock advanced by ``n`` since the previous table (the
        input iterator was wrapped); otherwise the new calls are split evenly in
        order when they divide, else left unknown.
        """
        log = _timing_log()
        calls = log[self._log_pos:]
        self._log_pos = len(log)
        begun = CLOCK.seq - self._last_seq
        self._last_seq = CLOCK.seq
        if n <= 0:
            return []
        if begun == n:
            first = CLOCK.seq - n + 1
            return [[c for c in calls if c.row == first + i] for i in range(n)]
        if calls and len(calls) % n == 0:
            k = len(calls) // n
            return [calls[i * k:(i + 1) * k] for i in range(n)]
        return [[] for _ in range(n)]

    def on_table(self, result: Any) -> None:
        if id(result) in self._seen:
            return  # the same object stringified twice
        self._seen[id(result)] = result
        metrics = list(getattr(result, "result", None) or [])
        op = str(getattr(result, "op_name", "") or "")
        dtype = benchapi.plain_dtype(getattr(result, "dtype", ""))
        for metric, calls in zip(metrics, self.calls_per_row(len(metrics)), strict=True):
            self.rows.append(self.row(op, dtype, metric, calls))
        self.write()

    def row(self, op: str, dtype: str, metric: Any, calls: list) -> dict:
        size_detail = benchapi.format_size_detail(getattr(metric, "shape_detail", None))
        error = getattr(metric, "error_msg", None)
        key = (op, dtype, size_detail)
        occurrence = self._occurrence[key]
        self._occurrence[key] += 1
        timer = None  # no routed call seen for this row: not claimed either way
        if calls:
            timer = "graph" if all(c.timer == "graph" for c in calls) else "direct"
        return {
            "op": op,
            "dtype": dtype,
            "size_detail": size_detail,
            "torch_latency_ms": _num(getattr(metric, "latency_base", None)),
            "latency_ms": _num(getattr(metric, "latency", None)),
            "speedup": _num(getattr(metric, "speedup", None)),
            "status": "SUCCESS" if error is None else "FAILED",
            "timer": timer,
            "fallback": any(c.fallback for c in calls),
            "error": None if error is None else str(error),
            # additive detail
            "occurrence": occurrence,
            "shape_label": benchapi.row_label(dtype, size_detail),
            "timers": [c.timer for c in calls],
            "fallback_phases": [c.phase for c in calls if c.fallback],
            "direct_repeat": max((c.repeat for c in calls if c.timer == "direct"), default=None),
            # FlagGems times the torch baseline first and its own kernel last.
            "replays": calls[-1].replays if calls else None,
            "replay_spread_pct": calls[-1].replay_spread_pct if calls else None,
            # With the L2 flushed: one flush's time, subtracted from each replay.
            "flush_ms": getattr(calls[-1], "flush_ms", None) if calls else None,
            "tflops": _num(getattr(metric, "tflops", None)),
            "torch_gbps": _num(getattr(metric, "gbps_base", None)),
            "gems_gbps": _num(getattr(metric, "gbps", None)),
        }

    # -- tests ----------------------------------------------------------------

    def on_report(self, report: Any) -> None:
        when = getattr(report, "when", "")
        outcome = getattr(report, "outcome", "")
        entry = self.tests.setdefault(report.nodeid, {"node": report.nodeid, "outcome": None,
                                                      "message": None})
        decisive = when == "call" or (when == "setup" and outcome != "passed") or \
            (when == "teardown" and outcome == "failed")
        if decisive and entry["outcome"] in (None, "passed"):
            entry["outcome"] = outcome if when != "teardown" else "error"
            entry["message"] = _message(report) if outcome != "passed" else None

    # -- output ---------------------------------------------------------------

    def markers(self) -> dict[str, int]:
        counts = markers.counts()
        autotune = sys.modules.get("zl_flaggems.cell.plugins.autotune")
        extra = getattr(autotune, "marker_counts", None)
        if callable(extra):
            try:
                for name, value in (extra() or {}).items():
                    counts[name] = counts.get(name, 0) + int(value)
            except Exception as exc:  # noqa: BLE001 - the document is still written, without them
                cellenv.note(PLUGIN, f"the autotune plugin's marker counts are missing: "
                             f"{cellenv.one_line(exc)}")
        return counts

    def document(self) -> dict:
        op = cellenv.env(contract.OP) or (self.rows[0]["op"] if self.rows else "")
        return {
            "schema": SCHEMA,
            "provider": cellenv.env(contract.PROVIDER) or "flaggems",
            "op": op,
            "complete": self.complete,
            "exitstatus": self.exitstatus,
            "rows": self.rows,
            "markers": self.markers(),
            "tests": list(self.tests.values()),
        }

    def write(self) -> None:
        cell = cellenv.cell_dir()
        if cell is None:
            return
        try:
            cellenv.write_json(cell / RESULTS_NAME, self.document())
        except Exception as exc:  # noqa: BLE001
            cellenv.note(PLUGIN, f"could not write {RESULTS_NAME}: {cellenv.one_line(exc)}")


def _message(report: Any) -> str | None:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None)
    if not text:
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            text = str(longrepr[2])
        else:
            lines = [ln for ln in str(getattr(report, "longreprtext", "") or "").splitlines() if ln.strip()]
            text = lines[-1] if lines else None
    return cellenv.one_line(text) if text else None


COLLECTOR = Collector()


def _wrap_str(original: Any) -> Any:
    def __str__(self: Any) -> str:
        text = original(self)
        try:
            COLLECTOR.on_table(self)
        except Exception as exc:  # noqa: BLE001 - recording must never break the printed table
            cellenv.note(PLUGIN, f"could not record a result table: {cellenv.one_line(exc)}")
        return text

    return __str__


def install(modules: Any) -> set[type]:
    """Wrap ``__str__`` of every BenchmarkResult class next to the benchmark classes."""
    classes = benchapi.result_classes(benchapi.discover_roots(modules))
    for cls in classes:
        if "__str__" in vars(cls):
            benchapi.wrap_own(cls, "__str__", _wrap_str)
        elif not getattr(getattr(cls, "__str__", None), benchapi.WRAPPED_FLAG, False):
            inherited = cls.__str__
            wrapper = _wrap_str(inherited)
            setattr(wrapper, benchapi.WRAPPED_FLAG, True)
            cls.__str__ = wrapper  # type: ignore[method-assign]  # patched on the class
    return classes


def _flush_on_signal() -> None:
    COLLECTOR.write()


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)
    crashsafe.register(_flush_on_signal)


def pytest_collection_finish(session: Any) -> None:
    install(benchapi.modules_of_items(session.items))
    COLLECTOR.write()  # an empty file says the cell started; "complete" says it ended


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    install(benchapi.modules_of_items([item]))


def pytest_runtest_logreport(report: Any) -> None:
    COLLECTOR.on_report(report)
    if getattr(report, "when", "") == "teardown":
        COLLECTOR.write()


@pytest.hookimpl(trylast=True)  # after the other plugins printed their session-end markers
def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    COLLECTOR.complete = True
    try:
        COLLECTOR.exitstatus = int(exitstatus)
    except (TypeError, ValueError):
        COLLECTOR.exitstatus = None
    COLLECTOR.write()


def pytest_unconfigure(config: Any) -> None:
    crashsafe.unregister(_flush_on_signal)
