"""A compact ``Benchmark`` with the API surface of FlagGems' ``benchmark/base.py``.

zl's pytest plugins hook FlagGems' class by name and attribute (``op_name``,
``torch_op``, ``gems_op``, ``dtypes``, ``shapes``, ``shape_desc``,
``set_shapes``, ``get_input_iter``, ``record_shapes``, ``get_latency``,
``run``); this one keeps those names and behaviours so the same plugins work on
the built-in suite unchanged. Two deliberate differences:

* ``run()`` checks each Triton result against torch before timing it; a
  mismatch makes that row FAILED (with its error, no latencies) and the test
  fails after the table is printed. Any other error is recorded, the table so
  far printed, and the error re-raised (a broken device context must stop the
  cell, as FlagGems stops it).
* kernel mode calls ``triton.testing.do_bench`` through the module attribute
  at call time, so a plugin that patches it is honoured.

torch is imported inside methods, so the module imports (and tests collect)
without it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from dataclasses import asdict
from typing import ClassVar

import pytest
import triton
import triton.testing  # get_latency looks do_bench up here at call time, so patches hold
import yaml

from . import conftest, consts
from .conftest import update_result
from .consts import BenchmarkMetrics, BenchmarkResult


class CorrectnessError(AssertionError):
    """Raised when the Triton op's result differs from torch's beyond tolerance."""


def device_name() -> str:
    """torch device type of Triton's active driver (``cuda``, ``musa``, ``npu``...)."""
    try:
        from triton.runtime import driver

        return driver.active.get_device_interface().__name__.rsplit(".", 1)[-1]
    except Exception:  # noqa: BLE001 - no active driver (no device): torch's default name
        return "cuda"


def _synchronize() -> None:
    from triton.runtime import driver

    driver.active.get_device_interface().synchronize()


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = " ".join(lines[:3])
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Benchmark:
    """Base of every benchmark; subclasses provide ``get_input_iter``."""

    DEFAULT_METRICS = consts.DEFAULT_METRICS
    DEFAULT_DTYPES = consts.DTYPE_NAMES  # names; converted to torch dtypes on use
    DEFAULT_SHAPES: ClassVar[list] = consts.DEFAULT_SHAPES
    DEFAULT_SHAPE_DESC = "M, N"
    DEFAULT_SHAPE_FILES = "core_shapes.yaml"

    def __init__(self, op_name, torch_op, dtypes=None, is_backward=False, is_inplace=False,
                 **kwargs):
        if is_backward:
            raise ValueError("the built-in suite has no backward benchmarks")
        gems_op = kwargs.get("gems_op")
        if gems_op is None:
            raise ValueError(f"{op_name}: the built-in suite needs gems_op (the Triton op)")
        self.op_name = op_name
        self.torch_op = torch_op
        self.gems_op = gems_op
        self.is_backward = False
        self.is_inplace = is_inplace
        self.dtypes = list(dtypes) if dtypes is not None else consts.torch_dtypes(self.DEFAULT_DTYPES)
        self.metrics = list(self.DEFAULT_METRICS)
        self.shapes = list(self.DEFAULT_SHAPES)
        self.shape_desc = self.DEFAULT_SHAPE_DESC
        self.shape_file = self.DEFAULT_SHAPE_FILES
        self.to_bench_dtypes = self.dtypes
        self.to_bench_metrics = self.metrics
        self.shape_key = None  # the YAML key set_shapes used (None: DEFAULT_SHAPES)
        self.device = device_name()
        for key, value in kwargs.items():  # as FlagGems: known attributes only
            if hasattr(self, key):
                setattr(self, key, value)

    # -- configuration (FlagGems' names) --------------------------------------------

    def set_dtypes(self, user_desired_dtypes) -> None:
        if user_desired_dtypes:
            bad = [d for d in user_desired_dtypes if d not in self.dtypes]
            if bad:
                raise ValueError(f"Given dtype(s) '{', '.join(str(d) for d in bad)}' can't be "
                                 f"supported by this op '{self.op_name}'")
        self.to_bench_dtypes = list(user_desired_dtypes) if user_desired_dtypes else self.dtypes

    def set_metrics(self, user_desired_metrics) -> None:
        self.to_bench_metrics = list(user_desired_metrics or self.metrics)

    def set_shapes(self, shape_file_path=None) -> None:
        """FlagGems' lookup: the op name, then each class name along the MRO, then defaults."""
        path = shape_file_path or self.shape_file
        try:
            with open(path, encoding="utf-8") as handle:
                table = yaml.safe_load(handle) or {}
        except FileNotFoundError:
            raise FileNotFoundError(f"Shape file '{path}' does not exist.") from None
        except yaml.YAMLError as exc:
            raise ValueError(f"Shape file '{path}' is not a valid YAML file. Error: {exc}") from None
        keys = [self.op_name] + [cls.__name__ for cls in type(self).__mro__]
        entry, self.shape_key = None, None
        for key in keys:
            if isinstance(table, dict) and key in table:
                entry, self.shape_key = table[key] or {}, key
                break
        if entry is None:
            self.shapes = list(self.DEFAULT_SHAPES)
        else:
            self.shapes = entry.get("shapes", self.DEFAULT_SHAPES)
            self.shape_desc = entry.get("shape_desc", self.DEFAULT_SHAPE_DESC)
        self.shapes = [tuple(s) if isinstance(s, (list, tuple)) else (s,) for s in self.shapes]
        cfg = conftest.Config
        if cfg is not None and cfg.bench_level == consts.BenchLevel.COMPREHENSIVE:
            more = [tuple(s) for s in self.set_more_shapes() or ()]
            self.shapes = list(dict.fromkeys(self.shapes + more))

    def set_more_shapes(self) -> list:
        """Extra shapes at comprehensive level (override)."""
        return []

    def init_user_config(self) -> None:
        cfg = conftest.config()
        self.mode = cfg.mode
        self.set_dtypes(cfg.user_desired_dtypes)
        self.set_metrics(cfg.user_desired_metrics)
        self.set_shapes(cfg.shape_file)

    # -- inputs -------------------------------------------------------------------------

    def get_input_iter(self, dtype) -> Generator:
        raise NotImplementedError("Each Benchmark must implement its own input iterator.")

    def record_shapes(self, *args, **kwargs):
        """Tensors become their ``torch.Size``; scalars and dtypes stay (FlagGems' form)."""
        import torch

        def parse(item):
            if isinstance(item, torch.Tensor):
                return item.size()
            if isinstance(item, (int, float, str, torch.dtype)):
                return item
            if isinstance(item, (list, tuple)):
                return [parse(sub) for sub in item]
            if isinstance(item, dict):
                return {k: parse(v) for k, v in item.items()}
            return None

        parsed_args = [parse(a) for a in args]
        parsed_kwargs = {k: parse(v) for k, v in kwargs.items()}
        if parsed_args and parsed_kwargs:
            return parsed_args, parsed_kwargs
        return parsed_args if parsed_args else parsed_kwargs

    def unpack_to_args_kwargs(self, input_tuple):
        args, kwargs = [], {}
        for item in input_tuple:
            if isinstance(item, dict):
                kwargs.update(item)
            else:
                args.append(item)
        return args, kwargs

    # -- correctness ----------------------------------------------------------------------

    def tolerance(self, dtype, args, kwargs) -> tuple[float, float]:
        """(rtol, atol) of the correctness check for this input."""
        return consts.TOLERANCE[consts.dtype_name(dtype)]

    def check_correctness(self, dtype, args, kwargs) -> None:
        import torch

        expected = self.torch_op(*args, **kwargs)
        actual = self.gems_op(*args, **kwargs)
        rtol, atol = self.tolerance(dtype, args, kwargs)
        try:
            torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as exc:
            lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
            raise CorrectnessError(f"{self.op_name} differs from torch (rtol={rtol:g}, "
                                   f"atol={atol:g}): " + "; ".join(lines[:3])) from None

    # -- timing ---------------------------------------------------------------------------

    def get_latency(self, op, *args, **kwargs) -> float:
        """Median latency in ms of ``op(*args, **kwargs)`` under the session's --mode."""
        def fn():
            return op(*args, **kwargs)

        cfg = conftest.config()
        if cfg.mode == consts.BenchMode.KERNEL:
            return triton.testing.do_bench(fn, warmup=cfg.warm_up, rep=cfg.repetition,
                                           return_mode="median", grad_to_none=None)
        if cfg.mode == consts.BenchMode.CUDAGRAPH:
            return triton.testing.do_bench_cudagraph(fn, rep=cfg.repetition, return_mode="median",
                                                     grad_to_none=None)
        if cfg.mode == consts.BenchMode.OPERATOR:
            return self._wall_clock(fn, cfg.warm_up, cfg.repetition)
        raise ValueError(f"unknown benchmark mode {cfg.mode!r}")

    @staticmethod
    def _wall_clock(fn, warmup_ms: float, rep_ms: float) -> float:
        _synchronize()
        start = time.perf_counter()
        for _ in range(5):
            fn()
        _synchronize()
        estimate = max((time.perf_counter() - start) / 5 * 1000, 1e-6)
        for _ in range(max(1, int(warmup_ms / estimate))):
            fn()
        n_rep = max(1, int(rep_ms / estimate))
        _synchronize()
        start = time.perf_counter()
        for _ in range(n_rep):
            fn()
        _synchronize()
        return (time.perf_counter() - start) / n_rep * 1000

    # -- the run ---------------------------------------------------------------------------

    def _print_result(self, dtype, metrics) -> None:
        cfg = conftest.config()
        result = BenchmarkResult(op_name=self.op_name, dtype=str(dtype), mode=cfg.mode.value,
                                 level=cfg.bench_level.value, result=metrics)
        print(result)
        update_result(self.op_name, asdict(result))

    def run(self) -> None:
        import torch

        # The torch reference of float32 GEMMs is full float32 (as FlagGems sets it).
        torch.backends.cuda.matmul.allow_tf32 = False
        self.init_user_config()
        mismatches = []
        for dtype in self.to_bench_dtypes:
            metrics = []
            for inputs in self.get_input_iter(dtype):
                args, kwargs = self.unpack_to_args_kwargs(inputs)
                metric = BenchmarkMetrics(shape_detail=self.record_shapes(*args, **kwargs))
                metrics.append(metric)
                try:
                    self.check_correctness(dtype, args, kwargs)
                    if "latency_base" in self.to_bench_metrics:
                        metric.latency_base = self.get_latency(self.torch_op, *args, **kwargs)
                    if "latency" in self.to_bench_metrics:
                        metric.latency = self.get_latency(self.gems_op, *args, **kwargs)
                    torch_ms, gems_ms = metric.latency_base, metric.latency
                    if "speedup" in self.to_bench_metrics and gems_ms and torch_ms is not None:
                        metric.speedup = torch_ms / gems_ms
                except CorrectnessError as exc:
                    metric.error_msg = str(exc)
                    mismatches.append(f"dtype={dtype} {metric.shape_detail}: {exc}")
                except Exception as exc:
                    metric.error_msg = _one_line(exc)
                    self._print_result(dtype, metrics)
                    raise
            self._print_result(dtype, metrics)
        if mismatches:
            pytest.fail(f"{len(mismatches)} row(s) of {self.op_name} differ from torch: "
                        + " | ".join(mismatches), pytrace=False)


class GenericBenchmark(Benchmark):
    """Inputs from ``input_fn(shape, dtype, device)`` for each shape."""

    def __init__(self, *args, input_fn=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn or self.default_input_fn

    @staticmethod
    def default_input_fn(shape, dtype, device):
        yield (generate_tensor_input(shape, dtype, device),)

    def set_more_shapes(self) -> list:
        return [(1 << 28,), (10000, 256), (100, 256, 100)]

    def get_input_iter(self, dtype) -> Generator:
        for shape in self.shapes:
            yield from self.input_fn(shape, dtype, self.device)


class UnaryPointwiseBenchmark(GenericBenchmark):
    """One input tensor per shape."""


class BinaryPointwiseBenchmark(GenericBenchmark):
    """Two input tensors of one shape."""

    @staticmethod
    def default_input_fn(shape, dtype, device):
        yield generate_tensor_input(shape, dtype, device), generate_tensor_input(shape, dtype, device)


class UnaryReductionBenchmark(GenericBenchmark):
    """One input tensor reduced by the op (over the last dimension or entirely)."""

    def set_more_shapes(self) -> list:
        return [(10000, 256), (1024, 65536)]


class NormBenchmark(GenericBenchmark):
    """Normalisation over every dimension after the first."""

    def set_more_shapes(self) -> list:
        return [(16, 16, 1024), (4096, 512), (1024, 2048)]


class BlasBenchmark(Benchmark):
    """GEMMs; shapes are (B, M, N, K) as in FlagGems (B is ignored by 2-D ops) or (M, N, K)."""

    DEFAULT_SHAPES: ClassVar[list] = [(1, 384, 384, 384), (1, 1024, 1024, 1024),
                                      (1, 4096, 4096, 4096)]
    DEFAULT_SHAPE_DESC = "B, M, N, K"
    #: per dtype; atol grows with sqrt(K) because rounding errors add up along K.
    GEMM_TOLERANCE: ClassVar[dict] = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-2}

    def __init__(self, *args, input_fn, **kwargs):
        super().__init__(*args, **kwargs)
        self.input_fn = input_fn

    def set_more_shapes(self) -> list:
        return [(1, 8192, 8192, 8192), (1, 4096, 14336, 4096), (1, 14336, 4096, 4096)]

    def get_input_iter(self, dtype) -> Generator:
        for shape in self.shapes:
            if len(shape) == 3:
                shape = (1, *shape)
            b, m, n, k = shape
            yield from self.input_fn(b, m, n, k, dtype, self.device)

    def tolerance(self, dtype, args, kwargs) -> tuple[float, float]:
        # float32 GEMMs run under Triton's default dot precision (tf32 unless changed).
        tol = self.GEMM_TOLERANCE[consts.dtype_name(dtype)]
        k = args[0].shape[-1]
        return tol, tol * math.sqrt(k)


def generate_tensor_input(shape, dtype, device):
    import torch

    return torch.randn(shape, dtype=dtype, device=device)


def unary_input_fn(shape, dtype, device):
    yield (generate_tensor_input(shape, dtype, device),)


def binary_input_fn(shape, dtype, device):
    yield generate_tensor_input(shape, dtype, device), generate_tensor_input(shape, dtype, device)


__all__ = [
    "Benchmark", "BinaryPointwiseBenchmark", "BlasBenchmark", "CorrectnessError", "GenericBenchmark",
    "NormBenchmark", "UnaryPointwiseBenchmark", "UnaryReductionBenchmark", "binary_input_fn",
    "device_name", "generate_tensor_input", "unary_input_fn",
]
