"""Timing routing: graph capture through a device interface, classified fallbacks,
the deny list, direct repeats, and which calls are routed at all."""

from __future__ import annotations

import contextlib
import statistics

import pytest
from zl_core import Backend, PluginHost, hookimpl
from zl_flaggems.cell import graph_timing, markers
from zl_flaggems.cell.plugins import timing
from zl_flaggems.cell.rowclock import CLOCK
from zl_flaggems.common.plugin_order import plan, resolve_timer

GPU = Backend(name="fakegpu", graph_capture=True, capture_deny=("denied_op",))


class Classifier:
    """The backend plugin's wording: matched on the message, never a generic footer."""

    @hookimpl
    def zl_backends(self):
        return [GPU]

    @hookimpl
    def zl_classify_capture_error(self, backend, exc):
        if backend.name != "fakegpu":
            return None
        text = str(exc).lower()
        if "illegal memory access" in text:
            return "fatal"
        if "unknown error" in text:
            return "poisoned"
        return None


@pytest.fixture
def host():
    h = PluginHost()
    h.register(Classifier(), name="fakegpu")
    return h


class FakeDI:
    """A device interface whose clock advances by each captured or direct launch."""

    def __init__(self, fail_phase=None, error=None):
        self.now = 0.0
        self.capturing = None
        self.fail_phase = fail_phase
        self.error = error or RuntimeError("operation not permitted when stream is capturing")
        self.replays = 0
        self.syncs = 0
        di = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                self.t = di.now

            def elapsed_time(self, other):
                return other.t - self.t

        class CUDAGraph:
            def __init__(self):
                self.nodes = []

            def replay(self):
                if di.fail_phase == "replay":
                    raise di.error
                di.replays += 1
                di.now += sum(self.nodes)

        @contextlib.contextmanager
        def graph(g):
            di.capturing = g
            try:
                yield g
            finally:
                di.capturing = None

        self.Event, self.CUDAGraph, self.graph = Event, CUDAGraph, graph
        self.Stream = object

    def stream(self, s):
        return contextlib.nullcontext()

    def synchronize(self):
        self.syncs += 1

    def kernel(self, cost):
        def fn():
            if self.capturing is not None:
                if self.fail_phase == "capture":
                    raise self.error
                self.capturing.nodes.append(cost)
            else:
                if self.fail_phase == "warmup":
                    raise self.error
                self.now += cost + 0.5  # a direct launch pays host overhead
        return fn


class Original:
    """Stands in for triton.testing.do_bench; returns queued values and logs its calls."""

    def __init__(self, values=None):
        self.values = list(values or [])
        self.calls = []

    def __call__(self, fn, **kwargs):
        self.calls.append(kwargs)
        return self.values.pop(0) if self.values else 1.0


def make_timer(host, di=None, mode="graph", repeat=1, op="someop", original=None, backend=GPU):
    return timing.Timer(original=original or Original(), mode=mode, backend=backend,
                        classify=host.classify_capture_error,
                        device_interface=(lambda: di) if di is not None else None,
                        repeat=repeat, op=lambda: op, log=[])


@pytest.fixture(autouse=True)
def _clean_markers():
    markers.reset()
    yield
    markers.reset()


def test_the_graph_timer_times_the_replays_not_the_launches(host):
    di = FakeDI()
    timer = make_timer(host, di)
    value = timer.do_bench(di.kernel(0.25), warmup=10, rep=10, return_mode="median")
    assert value == pytest.approx(0.25)  # direct would include the 0.5 host overhead
    assert di.replays == graph_timing.REPLAYS + 1  # the first, untimed, uploads the graph
    assert timer.log[-1].timer == "graph" and not timer.log[-1].fallback
    assert timer.original.calls == []


def captured_graphs(di):
    """Make ``di`` record the launches of every graph it captures; returns that list."""
    nodes = []
    real = di.CUDAGraph

    class Spy(real):
        def __init__(self):
            super().__init__()
            nodes.append(self.nodes)

    di.CUDAGraph = Spy
    return nodes


def test_graph_replays_cap_the_calls_per_graph_and_replay_a_capped_graph_more_often():
    di = FakeDI()
    nodes = captured_graphs(di)
    timing_ = graph_timing.graph_replays(di.kernel(1e-6), di, warmup=1, replay_ms=1e6)
    assert len(nodes[0]) == graph_timing.MAX_GRAPH_CALLS
    assert len(timing_.times) == graph_timing.MAX_REPLAYS == di.replays - 1


def test_each_replay_spends_about_the_replay_budget():
    # Ten replays of a graph of about replay_ms each, as do_bench_cudagraph spends rep.
    di = FakeDI()
    nodes = captured_graphs(di)
    timing_ = graph_timing.graph_replays(di.kernel(1.5), di, warmup=1, replay_ms=100)
    assert 50 <= sum(nodes[0]) <= 100  # the estimate includes launch overhead
    assert len(timing_.times) == graph_timing.REPLAYS == di.replays - 1
    assert timing_.calls_per_graph == len(nodes[0])


def test_a_capped_graph_is_replayed_more_often_to_spend_the_budget():
    # 1000 calls of a 0.01 ms kernel make a 10 ms graph; 100 ms a replay asks for ten times
    # more replays, up to MAX_REPLAYS.
    assert graph_timing.replay_plan(0.01, 100.0) == (graph_timing.MAX_GRAPH_CALLS, 100)
    assert graph_timing.replay_plan(0.05, 100.0) == (graph_timing.MAX_GRAPH_CALLS, 20)
    assert graph_timing.replay_plan(2.0, 100.0) == (50, graph_timing.REPLAYS)
    assert graph_timing.replay_plan(500.0, 100.0) == (1, graph_timing.REPLAYS)
    assert graph_timing.replay_plan(0.0, 100.0) == (graph_timing.MAX_GRAPH_CALLS, graph_timing.REPLAYS)


def test_the_spread_of_the_replays_is_logged_with_the_call(host):
    di = FakeDI()
    # The first replay (the graph's upload) is slow and not timed.
    lengths = iter([1.3, 1.0, 1.02, 0.99] + [1.0] * 20)
    real = di.CUDAGraph

    class Uneven(real):
        def replay(self):
            di.replays += 1
            di.now += sum(self.nodes) * next(lengths)

    di.CUDAGraph = Uneven
    timer = make_timer(host, di)
    timer.replay_ms = 10
    value = timer.do_bench(di.kernel(0.25), warmup=10, rep=10, return_mode="median")
    call = timer.log[-1]
    assert call.replays == graph_timing.REPLAYS
    assert call.replay_spread_pct == pytest.approx(3.0)  # (1.02 - 0.99) / 1.0
    assert value == pytest.approx(0.25)


def test_a_replay_budget_from_the_environment_is_checked(monkeypatch, capsys):
    from zl_flaggems.cell import cellenv

    monkeypatch.setenv("ZL_REPLAY_MS", "30")
    assert cellenv.env_float("ZL_REPLAY_MS", 100.0) == 30.0
    for bad in ("nan", "-1", "0", "inf", "fast"):
        monkeypatch.setenv("ZL_REPLAY_MS", bad)
        assert cellenv.env_float("ZL_REPLAY_MS", 100.0) == 100.0
    assert "ZL_REPLAY_MS='fast' is not a positive number; using 100" in capsys.readouterr().out


def test_recoverable_capture_error_falls_back_and_marks(host, capsys):
    di = FakeDI(fail_phase="capture")
    original = Original([0.7])
    timer = make_timer(host, di, original=original, op="rand")
    assert timer.do_bench(di.kernel(0.25), warmup=10, rep=10, return_mode="median") == 0.7
    out = capsys.readouterr().out
    line = [ln for ln in out.splitlines() if ln.startswith("BENCHMARK_DIRECT_NO_CUDAGRAPH")]
    assert line == [("BENCHMARK_DIRECT_NO_CUDAGRAPH op=rand phase=capture "
                     "error=RuntimeError: operation not permitted when stream is capturing")]
    call = timer.log[-1]
    assert (call.timer, call.fallback, call.phase) == ("direct", True, "capture")
    assert markers.counts()["BENCHMARK_DIRECT_NO_CUDAGRAPH"] == 1
    assert original.calls[0]["return_mode"] == "median"


@pytest.mark.parametrize("phase", ["warmup", "replay"])
def test_fallback_names_the_phase(host, capsys, phase):
    di = FakeDI(fail_phase=phase)
    timer = make_timer(host, di)
    timer.do_bench(di.kernel(0.25), return_mode="median")
    assert f"phase={phase} " in capsys.readouterr().out
    assert timer.log[-1].phase == phase


def test_fatal_capture_error_is_reraised_without_a_latency(host, capsys):
    err = RuntimeError("CUDA error: an illegal memory access was encountered")
    di = FakeDI(fail_phase="capture", error=err)
    timer = make_timer(host, di)
    with pytest.raises(RuntimeError) as info:
        timer.do_bench(di.kernel(0.25), return_mode="median")
    assert info.value is err
    assert timer.log == [] and timer.original.calls == []
    assert "BENCHMARK_" not in capsys.readouterr().out


def test_fatal_found_anywhere_in_the_chain_wins(host):
    di = FakeDI(fail_phase="capture")
    inner = RuntimeError("an illegal memory access was encountered")

    def fn():
        if di.capturing is not None:
            try:
                raise inner
            except RuntimeError:  # torch's own chain: the capture error's __context__ says why
                raise RuntimeError("operation failed due to a previous error during capture")  # noqa: B904
        di.now += 1

    with pytest.raises(RuntimeError, match="previous error during capture"):
        make_timer(host, di).do_bench(fn, return_mode="median")


def test_poisoned_capture_prints_marker_and_exits(host, capsys):
    di = FakeDI(fail_phase="capture", error=RuntimeError("MUSA error: unknown error"))
    timer = make_timer(host, di, op="unique2")
    with pytest.raises(pytest.exit.Exception) as info:
        timer.do_bench(di.kernel(0.25), return_mode="median")
    assert info.value.returncode == timing.POISONED_EXIT != 0
    out = capsys.readouterr().out
    assert "BENCHMARK_CAPTURE_POISONED op=unique2 error=RuntimeError: MUSA error: unknown error" in out
    assert timer.poisoned is not None
    # nothing more runs on that context
    with pytest.raises(timing.Poisoned):
        timer.do_bench(di.kernel(0.25), return_mode="median")
    assert timer.original.calls == []


def test_deny_list_skips_the_attempt(host, capsys):
    attempts = []
    timer = make_timer(host, FakeDI(), op="denied_op")
    timer.graph = lambda *a, **k: attempts.append(1)
    assert timer.do_bench(lambda: None, return_mode="median") == 1.0
    assert attempts == []
    assert "BENCHMARK_DIRECT_NO_CUDAGRAPH op=denied_op phase=denylist" in capsys.readouterr().out
    assert timer.log[-1].fallback and timer.log[-1].phase == "denylist"


def test_deny_key_is_the_function_name_not_a_prefix(host):
    attempts = []
    timer = make_timer(host, FakeDI(), op="denied_op2")
    timer.graph = lambda *a, **k: attempts.append(1) or graph_timing.GraphTiming(times=(0.1,), calls_per_graph=1)
    timer.do_bench(lambda: None, return_mode="median")
    assert attempts == [1]


def test_direct_repeat_takes_the_median_of_n_calls(host):
    original = Original([5.0, 1.0, 3.0, 100.0, 2.0])
    timer = make_timer(host, mode="direct", repeat=5, original=original)
    assert timer.do_bench(lambda: None, warmup=7, rep=9, return_mode="median") == 3.0
    assert len(original.calls) == 5 and all(c["warmup"] == 7 and c["rep"] == 9 for c in original.calls)
    assert timer.log[-1].repeat == 5 and timer.log[-1].timer == "direct" and not timer.log[-1].fallback


def test_fallback_rows_use_the_direct_repeat_too(host):
    di = FakeDI(fail_phase="capture")
    original = Original([4.0, 1.0, 2.0])
    timer = make_timer(host, di, repeat=3, original=original)
    assert timer.do_bench(di.kernel(1.0), return_mode="median") == statistics.median([4.0, 1.0, 2.0])


def test_tuner_calls_and_nested_calls_reach_the_original(host):
    original = Original([0.1, 0.2, 0.3])
    timer = make_timer(host, FakeDI(), original=original)
    # Triton's autotuner asks for quantiles: not a measurement
    assert timer.do_bench(lambda: None, quantiles=(0.5, 0.2, 0.8)) == 0.1
    assert timer.do_bench(lambda: None, return_mode="all") == 0.2
    # a do_bench inside the measured fn (autotuning on its first call) is not routed either
    seen = []

    class RunsFn:
        depth = 0

        def __call__(self, f, **kwargs):
            seen.append(kwargs.get("return_mode"))
            self.depth += 1
            try:
                if self.depth == 1:
                    f()  # do_bench calls fn, whose tuner calls do_bench again
                    return 0.9
                return 0.4
            finally:
                self.depth -= 1

    inner = []
    timer.mode = "direct"
    timer.original = RunsFn()
    timer.log.clear()
    assert timer.do_bench(lambda: inner.append(timer.do_bench(lambda: None, return_mode="median")),
                          return_mode="median") == 0.9
    assert inner == [0.4] and seen == ["median", "median"]
    assert len(timer.log) == 1  # only the outer call is a measurement


def test_rows_are_tagged_with_the_row_clock(host):
    di = FakeDI()
    timer = make_timer(host, di)
    seq = CLOCK.begin("[torch.Size([4])]", "4")
    timer.do_bench(di.kernel(1.0), return_mode="median")
    assert timer.log[-1].row == seq


def test_missing_graph_api_is_a_recoverable_fallback(host):
    di = FakeDI()
    di.CUDAGraph = None
    timer = make_timer(host, di)
    timer.do_bench(di.kernel(1.0), return_mode="median")
    assert timer.log[-1].fallback and timer.log[-1].phase == "warmup"


def test_graph_class_found_by_suffix():
    class MUSAGraph:
        pass

    class Iface:
        pass

    Iface.MUSAGraph = MUSAGraph
    assert graph_timing.graph_class(Iface) is MUSAGraph


def test_scratch_rng_restores_the_generator_state():
    class State:
        def __init__(self, v):
            self.v = v

        def clone_state(self):
            return State(self.v)

    class Gen:
        def __init__(self):
            self.state = State(1)

        def graphsafe_get_state(self):
            return self.state

        def graphsafe_set_state(self, s):
            self.state = s

    class Iface:
        default_generators = (Gen(),)

    gen = Iface.default_generators[0]
    original = gen.state
    with pytest.raises(ValueError), graph_timing.scratch_rng(Iface):
        assert gen.state is not original and gen.state.v == 1
        gen.state.v = 99  # the capture consumed/poisoned the scratch state
        raise ValueError("capture aborted")
    assert gen.state is original and original.v == 1


def test_resolve_timer_is_a_capability_not_a_name():
    no_graph = Backend(name="cuda", graph_capture=False)
    assert resolve_timer("auto", GPU) == ("graph", None)
    assert resolve_timer("auto", no_graph) == ("direct", None)
    mode, note = resolve_timer("graph", no_graph)
    assert mode == "direct" and "ignored" in note
    assert resolve_timer("direct", GPU) == ("direct", None)
    assert resolve_timer("none", GPU) == ("none", None)
    assert resolve_timer("auto", None) == ("direct", None)


def test_plan_order_and_capabilities(host):
    class Compat:
        @hookimpl
        def zl_compat_plugins(self, backend):
            return ["vendor_compat.mod"] if backend.name == "fakegpu" else []

    host.register(Compat(), name="compat")
    full = plan(GPU, host=host, autotune_mode="replay")
    assert full.modules == ("zl_flaggems.cell.plugins.phases", "vendor_compat.mod", "zl_flaggems.cell.plugins.vendor", "zl_flaggems.cell.plugins.seed",
                            "zl_flaggems.cell.plugins.shapes", "zl_flaggems.cell.plugins.autotune",
                            "zl_flaggems.cell.plugins.compile_pool",
                            "zl_flaggems.cell.plugins.ttgir", "zl_flaggems.cell.plugins.timing",
                            "zl_flaggems.cell.plugins.foreign", "zl_flaggems.cell.plugins.results")
    no_hooks = Backend(name="x", triton_hooks=False)
    small = plan(no_hooks, host=host, autotune_mode="uncontrolled", timer="none")
    assert "zl_flaggems.cell.plugins.ttgir" not in small.modules
    assert "zl_flaggems.cell.plugins.autotune" not in small.modules
    assert "zl_flaggems.cell.plugins.timing" not in small.modules and small.timer == "none"
    assert small.modules[-1] == "zl_flaggems.cell.plugins.results"


def test_marker_error_is_the_first_line_of_the_message(host, capsys):
    err = RuntimeError("CUDA error: operation not permitted when stream is capturing\n"
                       "Search for `cudaErrorStreamCaptureUnsupported' in https://docs.nvidia.com/...\n"
                       "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    di = FakeDI(fail_phase="capture", error=err)
    make_timer(host, di, op="nonzero").do_bench(di.kernel(1.0), return_mode="median")
    assert ("BENCHMARK_DIRECT_NO_CUDAGRAPH op=nonzero phase=capture error=RuntimeError: "
            "CUDA error: operation not permitted when stream is capturing\n") in capsys.readouterr().out


def test_a_flushed_graph_subtracts_the_flushes_timed_alone(host):
    # --l2 flush: a write before every call, captured with the calls and again alone;
    # each replay of the two gives (both - flushes alone) / calls.
    di = FakeDI()
    nodes = captured_graphs(di)
    flush = di.kernel(2.0)
    timing_ = graph_timing.graph_replays(di.kernel(0.5), di, warmup=1, replay_ms=100, flush=flush)
    with_calls, alone = nodes
    assert with_calls[:4] == [2.0, 0.5, 2.0, 0.5] and set(alone) == {2.0}
    assert len(with_calls) == 2 * len(alone) and 20 <= len(alone) <= 40  # the budget covers call + flush
    assert timing_.median_ms == pytest.approx(0.5) and timing_.flush_ms == pytest.approx(2.0)
    assert di.replays == 2 * (graph_timing.REPLAYS + 1)  # each graph uploaded once, untimed
    warm = graph_timing.graph_replays(di.kernel(0.5), di, warmup=1, replay_ms=100)
    assert warm.flush_ms is None and warm.median_ms == pytest.approx(0.5)


def test_the_timer_builds_its_flush_once_and_logs_what_it_cost(host):
    di = FakeDI()
    made = []

    def flush_factory():
        made.append(1)
        return di.kernel(3.0)

    timer = make_timer(host, di)
    timer.flush = flush_factory
    for _ in range(2):
        assert timer.do_bench(di.kernel(0.25), warmup=10, rep=10, return_mode="median") == pytest.approx(0.25)
    assert timer.log[-1].flush_ms == pytest.approx(3.0) and timer.log[-1].timer == "graph"
    assert len(made) == 2  # asked per call; the plugin's factory allocates its buffer once


def test_a_flush_that_cannot_be_built_falls_back_to_the_direct_timer(host, capsys):
    di = FakeDI()
    timer = make_timer(host, di, original=Original([0.9]))

    def broken():
        raise RuntimeError("out of memory allocating the flush buffer")

    timer.flush = broken
    assert timer.do_bench(di.kernel(0.25), return_mode="median") == 0.9
    assert "phase=flush " in capsys.readouterr().out
    assert timer.log[-1].fallback and timer.log[-1].phase == "flush"


@pytest.mark.parametrize("value,expected", [("warm", ("warm", None)), ("flush", ("flush", None)),
                                            (" FLUSH ", ("flush", None)), ("", ("warm", None))])
def test_the_l2_mode_is_read_from_the_contract(value, expected):
    assert timing.l2_mode(value) == expected


def test_an_unknown_l2_mode_is_said_and_the_default_used():
    mode, note = timing.l2_mode("cold")
    assert mode == "warm" and "unknown ZL_L2='cold'; using warm" in note


def test_the_flushes_alone_are_captured_apart_from_the_operators_launches():
    # The capture of the flushes alone runs in the TTGIR recorder's harness context: what
    # it launches (its flushes, the capture's own prologue) is the timer's, not a shape's.
    di = FakeDI()
    captured_inside = []

    @contextlib.contextmanager
    def apart():
        captured_inside.append(di.capturing)
        yield

    graph_timing.graph_replays(di.kernel(0.5), di, warmup=1, replay_ms=10, flush=di.kernel(2.0), apart=apart)
    assert len(captured_inside) == 1 and captured_inside[0] is None  # entered before that capture
    graph_timing.graph_replays(di.kernel(0.5), di, warmup=1, replay_ms=10, apart=apart)
    assert len(captured_inside) == 1  # warm: no second capture, nothing apart


def test_a_timer_given_the_recorders_harness_counts_the_flush_capture_apart(monkeypatch):
    from zl_flaggems.cell import ttgir_recorder

    recorder = ttgir_recorder.get_recorder()
    kinds = []
    real = recorder.apart

    @contextlib.contextmanager
    def spy(kind):
        kinds.append(kind)
        with real(kind):
            yield

    monkeypatch.setattr(recorder, "apart", spy)
    di = FakeDI()
    timer = timing.Timer(original=Original(), mode="graph", backend=GPU, device_interface=lambda: di,
                         flush=lambda: di.kernel(2.0), apart=recorder.harness, log=[])
    timer.do_bench(di.kernel(0.25), warmup=10, rep=10, return_mode="median")
    assert kinds == [ttgir_recorder.HARNESS]
