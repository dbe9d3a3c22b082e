"""A fake FlagGems checkout for CPU tests of the zl_flaggems provider and plugins.

``build(root)`` writes a tree with FlagGems' layout (``src/flag_gems``,
``benchmark/{conftest,base,consts}.py``, ``core_shapes.yaml``, ``test_*.py``)
whose benchmark API has FlagGems' public shape: ``Benchmark`` with ``op_name``,
``shapes``, ``set_shapes`` (op name, then the class chain), ``get_input_iter``,
``record_shapes``, ``unpack_to_args_kwargs`` and ``run()``, which times through
``triton.testing.do_bench`` and prints a ``BenchmarkResult`` in FlagGems' table
format. No torch: "tensors" are tiny objects with ``size()``, and the device is a
fake Triton driver (``fakedevice.py``) whose clock advances by each kernel's cost,
so Triton's real ``do_bench`` runs against it; a direct launch costs
``LAUNCH_OVERHEAD`` more than the same launch replayed from a graph, so a row's
latency tells which timer produced it.

``fakegpu_plugin.py`` registers the backend ``fakegpu`` (FlagGems vendor
``fakevendor``, graph capture on, ``capture_deny={"fakedenied"}``) with zl's plugin
host; load it with ``-p fakegpu_plugin`` before zl's plugins.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from zl_core import Backend, hookimpl
from zl_flaggems.host.provider import FlagGemsProvider

LAUNCH_OVERHEAD = 0.005
FLUSH_COST = 0.04  # device time of the fake driver's L2 flush

#: The backend of the fake checkout's cells (``fakegpu_plugin.py`` declares it there).
FAKEGPU = Backend(name="fakegpu", flaggems_vendor="fakevendor", graph_capture=True,
                  default_switch="DISABLE_MMA_V3")


class FakeGpuHost:
    """The orchestrator's side of ``fakegpu``: the backend, its one device, its compat
    plugin (the cell's own plugin host learns the backend from the checkout's module),
    and the real FlagGems provider."""

    @hookimpl
    def zl_backends(self):
        return [FAKEGPU]

    @hookimpl
    def zl_enumerate_devices(self, backend):
        return ["0"] if backend.name == "fakegpu" else None

    @hookimpl
    def zl_compat_plugins(self, backend):
        return ["fakegpu_plugin"] if backend.name == "fakegpu" else []

    @hookimpl
    def zl_providers(self):
        return [FlagGemsProvider()]


def on_fake_gpu(root: Path, monkeypatch) -> Path:
    """Campaigns of the checkout at ``root`` run here, in-process, on the fake GPU host:
    its torch stand-in on the cells' import path, no real backend's plugin, no FlagGems
    variable inherited from the caller."""
    import zl_core.plugins.host as host_module
    from zl_core import PluginHost

    monkeypatch.setenv("ZL_DISABLE_PLUGINS", "cuda,musa,rocm,ascend")
    for key in ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "FLAGGEMS_DIR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root / "stubs"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    host = PluginHost()
    host.register(FakeGpuHost(), name="fakegpu", package="tests", version="0")
    monkeypatch.setattr(host_module, "_HOST", host)
    return root


FILES: dict[str, str] = {}

FILES["src/flag_gems/__init__.py"] = '''
import os
vendor_name = os.environ.get("GEMS_VENDOR", "unset")
device = "fakedev"
__version__ = "0.0.fake"
if os.environ.get("FAKE_FOREIGN"):
    import flag_gems.runtime.backend._fakevendor.ops  # own vendor
    import flag_gems.runtime.backend._fakevendorx  # another vendor sharing a prefix
    import flag_gems.runtime.backend._nvidia.hopper  # another vendor, nested module
'''
for _pkg in ("runtime", "runtime/backend", "runtime/backend/_fakevendor", "runtime/backend/_fakevendorx",
             "runtime/backend/_nvidia", "runtime/backend/_nvidia/hopper"):
    FILES[f"src/flag_gems/{_pkg}/__init__.py"] = ""
FILES["src/flag_gems/runtime/backend/_fakevendor/ops.py"] = ""

FILES["fakegpu_plugin.py"] = '''
from zl_core import Backend, hookimpl, plugin_host


class FakeGpu:
    @hookimpl
    def zl_backends(self):
        return [Backend(name="fakegpu", flaggems_vendor="fakevendor", graph_capture=True,
                        capture_deny=("fakedenied",))]

    @hookimpl
    def zl_classify_capture_error(self, backend, exc):
        if backend.name != "fakegpu":
            return None
        text = str(exc).lower()
        if "kernel exploded" in text:
            return "fatal"
        if "context lost" in text:
            return "poisoned"
        return None


plugin_host().register(FakeGpu(), name="fakegpu")
'''

FILES["fakedevice.py"] = f'''
"""A fake Triton driver: events read a clock that launches advance."""
import contextlib

LAUNCH_OVERHEAD = {LAUNCH_OVERHEAD}
FLUSH_COST = {FLUSH_COST}


class _State:
    now = 0.0
    capturing = None


STATE = _State()


def launch(cost, capture_error=None, fail=None):
    if fail:
        raise RuntimeError(fail)
    if STATE.capturing is not None:
        if capture_error:
            raise RuntimeError(capture_error)
        STATE.capturing.nodes.append(cost)
    else:
        STATE.now += cost + LAUNCH_OVERHEAD


class Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = STATE.now

    def elapsed_time(self, other):
        return other.t - self.t


class Stream:
    pass


class CUDAGraph:
    def __init__(self):
        self.nodes = []

    def replay(self):
        STATE.now += sum(self.nodes)


class graph:
    def __init__(self, g, **kwargs):
        self.g = g

    def __enter__(self):
        STATE.capturing = self.g
        return self.g

    def __exit__(self, *exc):
        STATE.capturing = None
        return False


class DeviceInterface:
    __name__ = "fakedevice"
    Event = Event
    Stream = Stream
    CUDAGraph = CUDAGraph
    graph = graph

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def stream(s):
        return contextlib.nullcontext()


class FakeDriver:
    def get_device_interface(self):
        return DeviceInterface

    def get_empty_cache_for_benchmark(self):
        return object()

    def clear_cache(self, cache):
        launch(FLUSH_COST)  # do_bench's L2 flush, and a flushed graph's

    def get_benchmarker(self):
        from triton.testing import do_bench
        return do_bench


def install():
    import triton.runtime
    triton.runtime.driver.set_active(FakeDriver())
'''

FILES["pytest.ini"] = """
[pytest]
markers =
    fake: fake ops
"""

FILES["tests/test_fake.py"] = '''
"""FlagGems-style accuracy tests: one mark per operator (no torch: plain numbers)."""
import pytest


@pytest.mark.fakemm
@pytest.mark.parametrize("n", [1, 2, 3])
def test_fakemm(n):
    assert n * 2 == n + n


@pytest.mark.fakeadd
def test_fakeadd():
    assert 1 + 1 == 2
'''

FILES["benchmark/__init__.py"] = ""

FILES["benchmark/conftest.py"] = '''
import os
from enum import Enum

import flag_gems  # noqa: F401 - FlagGems' conftest imports it (vendor already chosen)
import fakedevice

from . import consts
from .consts import torch

fakedevice.install()


class Config:
    mode = "kernel"
    level = "comprehensive"
    dtypes = None
    shape_file = os.path.join(os.path.dirname(__file__), "core_shapes.yaml")
    warm_up = 2
    repetition = 2
    metrics = None  # --metrics, as FlagGems' conftest keeps it (None: every default metric)


def pytest_addoption(parser):
    parser.addoption("--mode", default="kernel", choices=["kernel", "operator"])
    parser.addoption("--level", default="comprehensive", choices=["core", "comprehensive"])
    # FlagGems' own vocabulary (benchmark/conftest.py): a name outside it is a usage error.
    parser.addoption("--dtypes", action="append", default=None, choices=[
        str(ele).split(".")[-1]
        for ele in consts.FLOAT_DTYPES + consts.INT_DTYPES + consts.BOOL_DTYPES + [torch.cfloat]])
    parser.addoption("--shape_file", default=Config.shape_file)
    parser.addoption("--metrics", action="append", default=None)


def pytest_configure(config):
    Config.mode = config.getoption("--mode")
    Config.level = config.getoption("--level")
    Config.dtypes = config.getoption("--dtypes")
    Config.shape_file = config.getoption("--shape_file")
    Config.metrics = config.getoption("--metrics")
'''

FILES["benchmark/consts.py"] = '''
from dataclasses import dataclass, field
from typing import Any, List, Optional


class torch:  # noqa: N801 - stands in for torch's dtypes (these fakes run without torch)
    """Each dtype is the name ``str(torch.<dtype>).split(".")[-1]`` gives."""
    float16, float32, bfloat16, float64 = "float16", "float32", "bfloat16", "float64"
    int16, int32, int64, bool = "int16", "int32", "int64", "bool"
    complex64 = cfloat = "complex64"


# FlagGems' dtype groups (benchmark/consts.py).
FLOAT_DTYPES = [torch.float16, torch.float32, torch.bfloat16]
INT_DTYPES = [torch.int16, torch.int32]
BOOL_DTYPES = [torch.bool]
COMPLEX_DTYPES = [torch.complex64]


@dataclass
class BenchmarkMetrics:
    shape_detail: Any = None
    latency_base: Optional[float] = None
    latency: Optional[float] = None
    speedup: Optional[float] = None
    tflops: Optional[float] = None
    gbps_base: Optional[float] = None
    gbps: Optional[float] = None
    error_msg: Optional[str] = None


def _cell(value, digits):
    return "N/A" if value is None else format(value, f".{digits}f")


@dataclass
class BenchmarkResult:
    op_name: str
    dtype: str
    mode: str
    level: str
    result: List[BenchmarkMetrics] = field(default_factory=list)

    def __str__(self):
        title = (f"\\nOperator: {self.op_name}  Performance Test "
                 f"(dtype={self.dtype}, mode={self.mode},level={self.level})\\n")
        names = [format("Status", "<10")] + [format(n, ">20") for n in
                 ("Torch Latency (ms)", "Gems Latency (ms)", "Gems Speedup")]
        names.append(format("Size Detail", ">20") + "\\n")
        header = " ".join(names)
        lines = [title, header, "-" * len(header) + "\\n"]
        for m in self.result:
            status = "SUCCESS" if m.error_msg is None else "FAILED"
            lines.append(format(status, "<10") + format(_cell(m.latency_base, 6), ">20")
                         + format(_cell(m.latency, 6), ">20") + format(_cell(m.speedup, 3), ">20")
                         + " " * 10 + f"{m.shape_detail if m.shape_detail is not None else 'N/A'}\\n")
        return "".join(lines)
'''

FILES["benchmark/base.py"] = '''
import math

import pytest
import triton
import triton.testing  # noqa: F401
import yaml

import fakedevice
from .conftest import Config
from .consts import BenchmarkMetrics, BenchmarkResult, torch


class Size(tuple):
    def __repr__(self):
        return f"torch.Size([{', '.join(str(d) for d in self)}])"

    __str__ = __repr__


class Tensor:
    def __init__(self, shape, dtype):
        self.shape = Size(shape)
        self.dtype = dtype

    def size(self):
        return self.shape


def op_cost(base_cost, capture_error=None, fail=None):
    """A fake operator: one kernel whose cost scales with the element count."""
    def op(*args, **kwargs):
        numel = 1
        for a in args:
            if isinstance(a, Tensor):
                numel = max(numel, math.prod(a.shape))
        fakedevice.launch(base_cost * numel / 4096.0, capture_error=capture_error, fail=fail)
    return op


class Benchmark:
    DEFAULT_SHAPES = [(1024,)]
    DEFAULT_SHAPE_DESC = "N"
    DEFAULT_DTYPES = [torch.float16, torch.float32]

    def __init__(self, op_name, torch_op, dtypes=None, is_backward=False, **kwargs):
        self.op_name = op_name
        self.torch_op = torch_op
        self.gems_op = kwargs.get("gems_op")
        self.is_backward = is_backward
        self.dtypes = dtypes or self.DEFAULT_DTYPES
        self.shapes = self.DEFAULT_SHAPES
        self.shape_desc = self.DEFAULT_SHAPE_DESC

    def set_dtypes(self, user_desired_dtypes):
        """FlagGems' check and its wording (benchmark/base.py, "can't" glued to the quote)."""
        if user_desired_dtypes and not all(d in self.dtypes for d in user_desired_dtypes):
            invalid = [d for d in user_desired_dtypes if d not in self.dtypes]
            raise ValueError(
                f"Given dtype(s) '{', '.join('torch.' + d for d in invalid)}'"
                f"can't be supported by this op '{self.op_name}'"
            )
        self.to_bench_dtypes = user_desired_dtypes if user_desired_dtypes else self.dtypes

    def set_shapes(self, shape_file_path=None):
        with open(shape_file_path) as fh:
            table = yaml.safe_load(fh) or {}
        entry = table.get(self.op_name)
        if entry is None:
            for klass in type(self).__mro__:
                if klass.__name__ in table:
                    entry = table[klass.__name__]
                    break
        if entry is None:
            self.shapes = self.DEFAULT_SHAPES
        else:
            self.shapes = entry.get("shapes", self.DEFAULT_SHAPES)
            self.shape_desc = entry.get("shape_desc", self.DEFAULT_SHAPE_DESC)
        self.shapes = [tuple(s) for s in self.shapes]
        if Config.level == "comprehensive":
            self.shapes = list(dict.fromkeys(self.shapes + self.set_more_shapes()))

    def set_more_shapes(self):
        return []

    def get_input_iter(self, dtype):
        raise NotImplementedError

    def record_shapes(self, *args, **kwargs):
        def parse(x):
            if isinstance(x, Tensor):
                return x.size()
            if isinstance(x, (int, float, str)):
                return x
            if isinstance(x, (list, tuple)):
                return [parse(i) for i in x]
            return None
        parsed = [parse(a) for a in args]
        parsed_kwargs = {k: parse(v) for k, v in kwargs.items()}
        if parsed and parsed_kwargs:
            return parsed, parsed_kwargs
        return parsed if parsed else parsed_kwargs

    def unpack_to_args_kwargs(self, input_tuple):
        args, kwargs = [], {}
        for item in input_tuple:
            if isinstance(item, dict):
                kwargs.update(item)
            else:
                args.append(item)
        if self.is_backward:
            raise AssertionError("zl must not unpack with is_backward on (it clones tensors)")
        return args, kwargs

    def get_latency(self, op, *args, **kwargs):
        fn = lambda: op(*args, **kwargs)
        return triton.testing.do_bench(fn, warmup=Config.warm_up, rep=Config.repetition,
                                       return_mode="median")

    def run(self):
        self.set_dtypes(Config.dtypes)
        self.set_shapes(Config.shape_file)
        for dtype in self.to_bench_dtypes:
            metrics = []
            for inp in self.get_input_iter(dtype):
                m = BenchmarkMetrics()
                try:
                    args, kwargs = self.unpack_to_args_kwargs(inp)
                    m.shape_detail = self.record_shapes(*args, **kwargs)
                    wanted = Config.metrics or ["latency_base", "latency", "speedup"]
                    if "latency_base" in wanted:
                        m.latency_base = self.get_latency(self.torch_op, *args, **kwargs)
                    m.latency = self.get_latency(self.gems_op, *args, **kwargs)
                    if "speedup" in wanted:
                        m.speedup = m.latency_base / m.latency
                except Exception as e:  # FlagGems turns every error into a test failure
                    m.error_msg = str(e)
                    pytest.fail(str(e))
                finally:
                    metrics.append(m)
            result = BenchmarkResult(op_name=self.op_name, dtype=f"torch.{dtype}", mode=Config.mode,
                                     level=Config.level, result=metrics)
            print(result)


class GenericBenchmark(Benchmark):
    def __init__(self, *args, input_fn, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn

    def set_more_shapes(self):
        return [(4096, 4096)]

    def get_input_iter(self, dtype):
        for shape in self.shapes:
            yield from self.input_fn(shape, dtype)


class BlasBenchmark(Benchmark):
    DEFAULT_SHAPE_DESC = "B, M, N, K"

    def get_input_iter(self, dtype):
        for b, m, n, k in self.shapes:
            yield Tensor((b, m, k), dtype), Tensor((b, k, n), dtype)


def unary_input(shape, dtype):
    yield Tensor(shape, dtype),


def binary_input(shape, dtype):
    yield Tensor(shape, dtype), Tensor(shape, dtype), {"alpha": 1}
'''

FILES["benchmark/core_shapes.yaml"] = """
faketuned:
  shapes: [[1024], [2048], [3072], [4096], [5120]]
  shape_desc: "N"
fakeadd:
  shapes: [[64, 64], [1024]]
  shape_desc: "M, N"
BlasBenchmark:
  shapes: [[2, 16, 16, 16]]
  shape_desc: "B, M, N, K"
Benchmark:
  shapes: [[256]]
"""

FILES["benchmark/test_fake_tuned.py"] = '''
"""An operator behind a real Triton Autotuner (its kernel a stand-in that launches on the
fake device): BLOCK=64 wins where n is a multiple of 2048, BLOCK=32 elsewhere."""
import pytest
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner, Config

import fakedevice

from . import base


@triton.jit
def tuned_kernel(x, n, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))


class StandIn:
    """What the tuner launches: remembers the config, costs device time when not a warmup."""

    block = None

    def run(self, *args, grid=None, warmup=False, **kwargs):
        self.block = kwargs["BLOCK"]
        if not warmup:
            fakedevice.launch(0.001 * self.block)


KERNEL = StandIn()
LAST = {}


def bench(kernel_call, quantiles=None):
    kernel_call()
    best = 64 if LAST["n"] % 2048 == 0 else 32
    return [0.5 if KERNEL.block == best else 1.0] * 3


TUNER = Autotuner(tuned_kernel, tuned_kernel.arg_names, [Config({"BLOCK": 32}), Config({"BLOCK": 64})],
                  ["n"], None, None, do_bench=bench)
TUNER.fn = KERNEL


def tuned_op(x):
    n = x.shape[0]
    LAST["n"] = n
    TUNER.run(x, n, grid=(1,))


@pytest.mark.fake
def test_faketuned():
    base.GenericBenchmark(op_name="faketuned", torch_op=base.op_cost(0.02), gems_op=tuned_op,
                          input_fn=base.unary_input).run()
'''

FILES["benchmark/test_fake.py"] = '''
import pytest

from . import base
from .consts import torch


@pytest.mark.fake
def test_fakeadd():
    base.GenericBenchmark(op_name="fakeadd", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.binary_input).run()


@pytest.mark.fake
def test_fakemm():
    class BmmBenchmark(base.BlasBenchmark):  # defined inside the test, as some FlagGems files do
        def get_input_iter(self, dtype):
            yield from super().get_input_iter(dtype)  # nested: must count each row once

    BmmBenchmark(op_name="fakemm", torch_op=base.op_cost(0.04), gems_op=base.op_cost(0.03)).run()


@pytest.mark.fake
def test_fakerng():
    base.GenericBenchmark(op_name="fakerng",
                          torch_op=base.op_cost(0.02, capture_error="operation not permitted when stream is capturing"),
                          gems_op=base.op_cost(0.01), input_fn=base.unary_input, dtypes=[torch.float16]).run()


@pytest.mark.fake
def test_fakedenied():
    base.GenericBenchmark(op_name="fakedenied", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=[torch.float16]).run()


@pytest.mark.fake
def test_fakefatal():
    base.GenericBenchmark(op_name="fakefatal", torch_op=base.op_cost(0.02),
                          gems_op=base.op_cost(0.01, capture_error="kernel exploded: illegal access"),
                          input_fn=base.unary_input, dtypes=[torch.float16]).run()


@pytest.mark.fake
def test_fakepoison():
    base.GenericBenchmark(op_name="fakepoison", torch_op=base.op_cost(0.02),
                          gems_op=base.op_cost(0.01, capture_error="device context lost"),
                          input_fn=base.unary_input, dtypes=[torch.float16]).run()


def test_seedcheck():
    import random
    print(f"SEEDCHECK {random.random()!r}")


def test_zafter():
    """Runs after test_fakepoison in file order; must not run once the cell is poisoned."""
    base.GenericBenchmark(op_name="zafter", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=[torch.float16]).run()
'''

#: Benchmarks that declare their dtypes each way FlagGems' own files do (opt in with
#: ``add_dtype_benchmarks``): a literal list (randperm's ``[torch.int32, torch.int64]``,
#: int64 outside the command line's choices), ``consts`` groups added up, a local list,
#: a class's ``DEFAULT_DTYPES``, a helper of the file; and ways that depend on the run,
#: which read as unknown: a parametrized ``[dtype]``, a call (``consts.FP8_DTYPES`` is
#: ``[get_fp8_dtype()]``), a list appended to where the device allows, a class with its
#: own ``set_dtypes``. ``fakedevice`` runs
#: float32 only and refuses a filter in FlagGems' words.
DTYPE_FILES: dict[str, str] = {}
DTYPE_FILES["benchmark/test_fake_dtypes.py"] = '''
import pytest

from . import base, consts
from .consts import torch


def _float32_bench(name):
    return base.GenericBenchmark(op_name=name, torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                                 input_fn=base.unary_input, dtypes=[torch.float32])


def _device_dtypes():
    return [torch.float32]


# As FlagGems' test_igammac.py: float64 where the device has it.
_FP64_DTYPES = [torch.float32]
if getattr(base, "SUPPORT_FP64", False):
    _FP64_DTYPES.append(torch.float64)


class OwnDefault(base.GenericBenchmark):
    DEFAULT_DTYPES = [torch.bfloat16]

    def __init__(self, *args, dtypes=None, **kwargs):
        super().__init__(*args, dtypes=dtypes, **kwargs)


class OwnFilter(base.GenericBenchmark):
    def set_dtypes(self, user_desired_dtypes):
        self.to_bench_dtypes = self.dtypes


@pytest.mark.fakerand
def test_fakerand():
    base.GenericBenchmark(op_name="fakerand", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=[torch.int32, torch.int64]).run()


@pytest.mark.fakeint
def test_fakeint():
    base.GenericBenchmark(op_name="fakeint", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=consts.INT_DTYPES + consts.BOOL_DTYPES).run()


@pytest.mark.fakelocal
def test_fakelocal():
    dtypes = [torch.float32]
    base.GenericBenchmark(op_name="fakelocal", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=dtypes).run()


@pytest.mark.fakeclass
def test_fakeclass():
    OwnDefault(op_name="fakeclass", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
               input_fn=base.unary_input).run()


@pytest.mark.fakeparam
@pytest.mark.parametrize("dtype", consts.FLOAT_DTYPES)
def test_fakeparam(dtype):
    base.GenericBenchmark(op_name="fakeparam", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=[dtype]).run()


@pytest.mark.fakeown
def test_fakeown():
    OwnFilter(op_name="fakeown", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
              input_fn=base.unary_input, dtypes=[torch.float16]).run()


@pytest.mark.fakehelper
def test_fakehelper():
    _float32_bench("fakehelper").run()


@pytest.mark.fakefp64
def test_fakefp64():
    base.GenericBenchmark(op_name="fakefp64", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=_FP64_DTYPES).run()


@pytest.mark.fakedevice
def test_fakedevice():
    base.GenericBenchmark(op_name="fakedevice", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input, dtypes=_device_dtypes()).run()
'''


def add_dtype_benchmarks(root: Path) -> Path:
    for rel, text in DTYPE_FILES.items():
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    return root


ZL_PLUGINS = ("phases", "vendor", "seed", "shapes", "timing", "foreign", "results")


# The provider's preflight looks torch up and ``zl freeze`` imports it; the fake benchmarks
# never use it. ``build`` puts this stand-in under ``<root>/stubs`` for tests that put
# that folder on PYTHONPATH.
TORCH_STUB = '''
"""Stand-in for torch in CPU tests: only what zl's seed and vendor plugins touch."""
__version__ = "0+fake"


def manual_seed(seed):
    return None
'''


def build(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), encoding="utf-8")
    stub = root / "stubs" / "torch" / "__init__.py"
    stub.parent.mkdir(parents=True, exist_ok=True)
    stub.write_text(TORCH_STUB.lstrip("\n"), encoding="utf-8")
    return root


def run_cell(root: Path, cell: Path, node: str, *, extra_env: dict | None = None,
             extra_args: tuple[str, ...] = (), plugins: tuple[str, ...] = ZL_PLUGINS,
             timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run one pytest cell on the fake checkout with zl's plugins, as a provider would."""
    argv, env = cell_command(root, cell, node, extra_env=extra_env, extra_args=extra_args, plugins=plugins)
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def cell_command(root: Path, cell: Path, node: str, *, extra_env: dict | None = None,
                 extra_args: tuple[str, ...] = (),
                 plugins: tuple[str, ...] = ZL_PLUGINS) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of one such cell (its folder made)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ZL_") and k not in ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "GEMS_BACKEND",
                                                    "FLAGGEMS_BACKEND", "PYTEST_ADDOPTS")}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)] +
                                      [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        "ZL_CELL_DIR": str(cell),
        "ZL_BACKEND": "fakegpu",
        "ZL_TIMER": "auto",
        "ZL_OP": node.rsplit("::test_", 1)[-1],
        "ZL_DISABLE_PLUGINS": "cuda,musa,rocm,ascend",
    })
    env.update(extra_env or {})
    cell.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "-p", "fakegpu_plugin"]
    for name in plugins:
        argv += ["-p", f"zl_flaggems.cell.plugins.{name}"]
    return [*argv, node, "--level", "core", "--mode", "kernel", *extra_args], env
