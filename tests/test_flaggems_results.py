"""results.json rows: taken from the printed BenchmarkResult, mapped to the timed calls."""

from __future__ import annotations

import json
import types
from dataclasses import dataclass, field

import attrs
import pytest
from zl_flaggems.cell import markers
from zl_flaggems.cell.plugins import results, timing
from zl_flaggems.cell.rowclock import CLOCK


@dataclass
class Metric:
    shape_detail: object = None
    latency_base: float | None = None
    latency: float | None = None
    speedup: float | None = None
    error_msg: str | None = None


@dataclass
class BenchmarkResult:
    op_name: str
    dtype: str
    mode: str = "kernel"
    level: str = "core"
    result: list = field(default_factory=list)

    def __str__(self):
        return f"table of {len(self.result)}"


class Benchmark:
    def run(self):
        pass

    def set_shapes(self, path=None):
        pass

    def get_input_iter(self, dtype):
        yield ()


@pytest.fixture
def collector(monkeypatch, tmp_path):
    monkeypatch.setenv("ZL_CELL_DIR", str(tmp_path))
    monkeypatch.setenv("ZL_OP", "softmax")
    monkeypatch.setattr(timing, "TIMING_LOG", [])
    c = results.Collector()
    monkeypatch.setattr(results, "COLLECTOR", c)
    markers.reset()
    yield c
    markers.reset()


def call(row, t="graph", fallback=False, phase=None, repeat=1):
    return timing.TimedCall(row=row, op="softmax", timer=t, fallback=fallback, phase=phase, repeat=repeat)


def test_rows_map_exactly_to_timed_calls_by_row_clock(collector, tmp_path):
    first = CLOCK.begin("a", "a")
    second = CLOCK.begin("b", "b")
    timing.TIMING_LOG += [call(first), call(first), call(second, "direct", True, "capture"), call(second)]
    table = BenchmarkResult("softmax", "torch.float16", result=[
        Metric([("torch.Size([4])")], 0.2, 0.1, 2.0), Metric(["x"], 0.3, 0.3, 1.0)])
    collector.on_table(table)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema"] == 1 and doc["op"] == "softmax" and doc["complete"] is False
    a, b = doc["rows"]
    assert (a["dtype"], a["size_detail"], a["timer"], a["fallback"]) == ("float16", "['torch.Size([4])']",
                                                                       "graph", False)
    assert (b["timer"], b["fallback"], b["fallback_phases"]) == ("direct", True, ["capture"])
    assert a["torch_latency_ms"] == 0.2 and a["latency_ms"] == 0.1 and a["speedup"] == 2.0
    assert a["status"] == "SUCCESS" and a["error"] is None


def test_the_gems_calls_replay_spread_is_the_rows_within_cell_spread(collector, tmp_path):
    from zl_core.interface.rows import read_results

    row = CLOCK.begin("a", "a")
    torch_call = attrs.evolve(call(row), replays=10, replay_spread_pct=9.0)
    gems_call = attrs.evolve(call(row), replays=12, replay_spread_pct=0.4)
    timing.TIMING_LOG += [torch_call, gems_call]
    collector.on_table(BenchmarkResult("softmax", "torch.float16",
                                       result=[Metric(["x"], 0.2, 0.1, 2.0)]))
    raw = json.loads((tmp_path / "results.json").read_text())["rows"][0]
    assert (raw["replays"], raw["replay_spread_pct"]) == (12, 0.4)
    assert read_results(tmp_path).rows[0].replay_spread_pct == 0.4


def test_even_split_when_rows_were_not_clocked(collector):
    timing.TIMING_LOG += [call(0), call(0, "direct", True), call(0), call(0)]
    collector.on_table(BenchmarkResult("x", "torch.float32", result=[Metric("s1"), Metric("s2")]))
    assert [r["timer"] for r in collector.rows] == ["direct", "graph"]
    assert [r["fallback"] for r in collector.rows] == [True, False]


def test_unknown_timer_is_not_claimed(collector):
    timing.TIMING_LOG += [call(0)] * 3
    collector.on_table(BenchmarkResult("x", "float32", result=[Metric("s1"), Metric("s2")]))
    assert [r["timer"] for r in collector.rows] == [None, None]


def test_same_object_printed_twice_is_recorded_once(collector):
    table = BenchmarkResult("x", "torch.float16", result=[Metric("s")])
    collector.on_table(table)
    collector.on_table(table)
    assert len(collector.rows) == 1


def test_failed_rows_non_finite_numbers_and_occurrences(collector):
    collector.on_table(BenchmarkResult("mm", "torch.float16", result=[
        Metric("s", 1.0, 0.0, float("inf")), Metric("s", None, None, None, error_msg="boom"),
        Metric(None, 1.0, 1.0, 1.0)]))
    r0, r1, r2 = collector.rows
    assert r0["speedup"] is None and r0["occurrence"] == 0
    assert r1["status"] == "FAILED" and r1["error"] == "boom" and r1["occurrence"] == 1
    assert r2["size_detail"] == "N/A"


def test_install_wraps_str_of_the_result_class_next_to_the_benchmark(collector):
    mod = types.ModuleType("fake_base_for_results")
    Benchmark.__module__ = mod.__name__
    mod.Benchmark = Benchmark
    mod.BenchmarkResult = BenchmarkResult
    import sys

    sys.modules[mod.__name__] = mod
    try:
        test_module = types.ModuleType("t")
        test_module.base = mod
        assert results.install([test_module]) == {BenchmarkResult}
        text = str(BenchmarkResult("op", "torch.float16", result=[Metric("s", 1.0, 0.5, 2.0)]))
        assert text == "table of 1"  # the printed text is untouched
        assert collector.rows[-1]["op"] == "op"
        results.install([test_module])  # idempotent
        str(BenchmarkResult("op2", "torch.float16", result=[Metric("s")]))
        assert [r["op"] for r in collector.rows] == ["op", "op2"]
    finally:
        BenchmarkResult.__str__ = BenchmarkResult.__str__.__zl_original__
        del sys.modules[mod.__name__]


def test_markers_include_the_autotune_plugins_count(collector, monkeypatch):
    markers.emit(markers.DIRECT_NO_CUDAGRAPH, ("op", "x"), ("phase", "capture"), ("error", "e"))
    fake = types.SimpleNamespace(marker_counts=lambda: {"AUTOTUNE_REPLAY_FALLBACK": 3})
    monkeypatch.setitem(__import__("sys").modules, "zl_flaggems.cell.plugins.autotune", fake)
    counts = collector.markers()
    assert counts == {"AUTOTUNE_REPLAY_FALLBACK": 3, "BENCHMARK_DIRECT_NO_CUDAGRAPH": 1,
                      "BENCHMARK_CAPTURE_POISONED": 0, "FOREIGN_VENDOR_MODULE": 0,
                      "PARALLEL_COMPILE_FALLBACK": 0}
