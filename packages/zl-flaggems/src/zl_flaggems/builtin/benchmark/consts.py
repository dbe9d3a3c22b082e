"""Constants and result records of the built-in suite, in FlagGems' shapes.

``BenchmarkResult.__str__`` prints the table FlagGems prints, byte for byte, so
any reader of FlagGems output (zl's row parser, a user's eyes) reads ours. The
module imports without torch: dtype groups such as ``FLOAT_DTYPES`` become torch
dtypes only when accessed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

DTYPE_NAMES = ("float16", "float32", "bfloat16")
#: Named dtype groups; ``consts.FLOAT_DTYPES`` gives them as torch dtypes.
DTYPE_GROUPS = {
    "FLOAT_DTYPES": ("float16", "float32", "bfloat16"),
    "FP16_BF16_DTYPES": ("float16", "bfloat16"),
    "FP32_DTYPES": ("float32",),
}

DEFAULT_WARMUP_TIME = 1000  # ms, as FlagGems
DEFAULT_ITER_TIME = 100  # ms, as FlagGems
DEFAULT_SHAPES = [(1048576,), (64, 64), (4096, 4096), (64, 512, 512), (1024, 1024, 1024)]
DEFAULT_METRICS = ["latency_base", "latency", "speedup"]

#: (rtol, atol) of the correctness check per dtype; benchmarks may scale them.
TOLERANCE = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-5, 1e-5),
}


def torch_dtypes(names) -> list:
    """torch dtypes for dtype names (imports torch)."""
    import torch

    return [getattr(torch, name) for name in names]


def dtype_name(dtype: Any) -> str:
    """``torch.float16`` or ``"float16"`` -> ``"float16"``."""
    return str(dtype).rsplit(".", 1)[-1]


def __getattr__(name: str):
    if name in DTYPE_GROUPS:
        return torch_dtypes(DTYPE_GROUPS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class BenchMode(Enum):
    KERNEL = "kernel"
    OPERATOR = "operator"
    CUDAGRAPH = "cudagraph"


class BenchLevel(Enum):
    COMPREHENSIVE = "comprehensive"
    CORE = "core"


@dataclass
class BenchmarkMetrics:
    """One measured input (one row of the table)."""

    legacy_shape: int | None = None
    shape_detail: Any = None  # what Benchmark.record_shapes returned
    latency_base: float | None = None  # torch, ms
    latency: float | None = None  # Triton op, ms
    gbps_base: float | None = None
    gbps: float | None = None
    speedup: float | None = None
    accuracy: float | None = None
    tflops: float | None = None
    utilization: float | None = None
    compared_speedup: float | None = None
    error_msg: str | None = None


WIDTH = 20
STATUS_WIDTH = 10
DETAIL_GAP = " " * 10


def _num(value: float | None, digits: int) -> str:
    return "N/A" if value is None else f"{value:.{digits}f}"


@dataclass
class BenchmarkResult:
    """Every row of one operator at one dtype; ``str()`` is FlagGems' table."""

    op_name: str
    dtype: str
    mode: str
    level: str
    result: list

    def __str__(self) -> str:
        first = self.result[0] if self.result else BenchmarkMetrics()
        title = (f"\nOperator: {self.op_name}  Performance Test (dtype={self.dtype}, "
                 f"mode={self.mode},level={self.level})\n")
        columns = [f"{'Status':<{STATUS_WIDTH}}", f"{'Torch Latency (ms)':>{WIDTH}}",
                   f"{'Gems Latency (ms)':>{WIDTH}}", f"{'Gems Speedup':>{WIDTH}}"]
        if first.tflops:
            columns.append(f"{'TFLOPS':>{WIDTH}}")
        if first.gbps is not None:
            columns += [f"{'Torch GBPS ':>{WIDTH}}", f"{'Gems GBPS ':>{WIDTH}}"]
        columns.append(f"{'Size Detail':>{WIDTH}}\n")
        header = " ".join(columns)
        # The dash line is as long as the header including its newline (FlagGems).
        return title + header + "-" * len(header) + "\n" + "".join(
            self._format_metrics(m) for m in self.result)

    def _format_metrics(self, m: BenchmarkMetrics) -> str:
        status = "SUCCESS" if m.error_msg is None else "FAILED"
        line = (f"{status:<{STATUS_WIDTH}}{_num(m.latency_base, 6):>{WIDTH}}"
                f"{_num(m.latency, 6):>{WIDTH}}{_num(m.speedup, 3):>{WIDTH}}")
        if m.tflops:
            line += f"{_num(m.tflops, 3):>{WIDTH}}"
        if m.gbps is not None:
            line += f"{_num(m.gbps_base, 3):>{WIDTH}}{_num(m.gbps, 3):>{WIDTH}}"
        detail = "N/A" if m.shape_detail is None else m.shape_detail
        return f"{line}{DETAIL_GAP}{detail}\n"

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str)
