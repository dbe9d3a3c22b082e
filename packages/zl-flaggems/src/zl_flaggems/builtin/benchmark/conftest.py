"""Command-line options of the built-in suite: the FlagGems benchmark options zl uses.

``--level core|comprehensive``, ``--mode kernel|cudagraph|operator``,
``--dtypes`` (repeatable), ``--shape_file``, ``--warmup`` / ``--iter`` (ms), and
``--record none|json`` with ``--output``. The suite lives inside site-packages,
so ``--record json`` writes only to ``--output`` or, in a zl cell, to
``$ZL_CELL_DIR/benchmark_result.json`` -- never next to these files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from . import consts

HERE = Path(__file__).resolve().parent
DEFAULT_SHAPE_FILE = str(HERE / "core_shapes.yaml")
REPORT_NAME = "benchmark_result.json"
#: pytest's own marks; the first other mark of a test is its operator id.
BUILTIN_MARKS = ("parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings",
                 "timeout", "tryfirst", "trylast")

Config: BenchConfig | None = None  # the BenchConfig of this session, set in pytest_configure
TEST_RESULTS: dict = {}


class BenchConfig:
    """What the options asked for; ``benchmark.base`` reads it at run time."""

    def __init__(self) -> None:
        self.mode = consts.BenchMode.KERNEL
        self.bench_level = consts.BenchLevel.COMPREHENSIVE
        self.warm_up = consts.DEFAULT_WARMUP_TIME
        self.repetition = consts.DEFAULT_ITER_TIME
        self.record_log = False
        self.record_json = False
        self.output: str | None = None
        self.user_desired_dtypes: list[Any] | None = None  # torch dtypes, or None for each op's own
        self.user_desired_metrics: list[str] | None = None
        self.shape_file = DEFAULT_SHAPE_FILE
        self.query = False
        self.parallel = 0


def pytest_addoption(parser):
    parser.addoption("--mode", default="kernel", choices=[m.value for m in consts.BenchMode],
                     help="kernel: triton.testing.do_bench; cudagraph: do_bench_cudagraph; "
                     "operator: wall clock with device synchronisation")
    parser.addoption("--level", default="comprehensive",
                     choices=[lv.value for lv in consts.BenchLevel],
                     help="core: the shape file's shapes; comprehensive: plus each benchmark's extra shapes")
    parser.addoption("--warmup", default=consts.DEFAULT_WARMUP_TIME, help="warmup time per timing, ms")
    parser.addoption("--iter", default=consts.DEFAULT_ITER_TIME, help="measured time per timing, ms")
    parser.addoption("--dtypes", action="append", default=None, choices=list(consts.DTYPE_NAMES),
                     help="dtype to run (repeatable; default: each operator's own list)")
    parser.addoption("--shape_file", default=DEFAULT_SHAPE_FILE,
                     help="YAML of shapes keyed by op name or benchmark class name")
    parser.addoption("--metrics", action="append", default=None,
                     choices=[*consts.DEFAULT_METRICS, "accuracy"],
                     help="what to measure (repeatable; FlagGems' option): 'accuracy' alone checks "
                     "each shape against torch and times nothing (a check cell)")
    parser.addoption("--record", default="none", choices=["none", "json"],
                     help="json: write every result to --output")
    parser.addoption("--output", default=None,
                     help=f"JSON report path for --record json (default in a zl cell: "
                     f"$ZL_CELL_DIR/{REPORT_NAME})")


def _report_path(config) -> str:
    output = config.getoption("--output")
    if output:
        return str(Path(output).resolve())
    cell = os.environ.get("ZL_CELL_DIR")
    if cell:
        return str(Path(cell) / REPORT_NAME)
    raise pytest.UsageError("--record json needs --output PATH: the built-in suite never writes "
                            "into its own installed folder")


def pytest_configure(config):
    global Config
    cfg = BenchConfig()
    cfg.mode = consts.BenchMode(config.getoption("--mode"))
    cfg.bench_level = consts.BenchLevel(config.getoption("--level"))
    try:
        cfg.warm_up = int(config.getoption("--warmup"))
        cfg.repetition = int(config.getoption("--iter"))
    except ValueError:
        raise pytest.UsageError("--warmup and --iter take whole milliseconds") from None
    names = config.getoption("--dtypes")
    cfg.user_desired_dtypes = consts.torch_dtypes(names) if names else None
    cfg.shape_file = config.getoption("--shape_file")
    cfg.user_desired_metrics = config.getoption("--metrics")
    cfg.record_json = config.getoption("--record") == "json"
    if cfg.record_json:
        cfg.output = _report_path(config)
    Config = cfg


def config() -> BenchConfig:
    """The session's configuration; pytest_configure sets it before any benchmark runs."""
    if Config is None:
        raise RuntimeError("the built-in benchmarks run under their own conftest, which was not configured")
    return Config


def update_result(op: str, data: dict) -> None:
    """Keep one dtype's result for the --record json report."""
    if Config is None or not Config.record_json:
        return
    TEST_RESULTS.setdefault(op, {}).setdefault("details", []).append(data)


def _op_id(item) -> str:
    marks = [m.name for m in item.iter_markers() if m.name not in BUILTIN_MARKS]
    return marks[0] if marks else item.nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().opid = _op_id(item)


def pytest_runtest_logreport(report):
    if Config is None or not Config.record_json or not hasattr(report, "opid"):
        return
    entry = TEST_RESULTS.setdefault(report.opid, {})
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        entry["result"] = report.outcome
        entry["test_case"] = report.nodeid
        entry["reason"] = None if report.outcome == "passed" else _reason(report)


def _reason(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    return str(report.longrepr)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if Config is None or not Config.record_json or Config.output is None:
        return
    path = Path(Config.output)
    data = {}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            data = {}
    data.update(TEST_RESULTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
