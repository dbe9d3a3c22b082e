"""``layer_norm`` over the trailing dimensions, with weight and bias.

A row reduction followed by a broadcast back over the row, which is where
layout conversions appear in TTGIR. Rows up to ``ROW_LIMIT`` elements are one
tile (``layer_norm_row_kernel``); longer rows stream through
``layer_norm_loop_kernel`` (sum and sum of squares, then normalise). Statistics
are float32.
"""

from __future__ import annotations

import triton
import triton.language as tl
from zl_flaggems.builtin.kernels._spec import (
    TRITON_TYPES,
    CompileSpec,
    divisible_by_16,
    make_spec,
    numel,
    row_or_loop,
)

DTYPES = ("float16", "float32", "bfloat16")
ROW_LIMIT = 8192
LOOP_BLOCK = 4096


@triton.jit
def layer_norm_row_kernel(y_ptr, x_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = centred * rstd * w + b
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_loop_kernel(y_ptr, x_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    src = x_ptr + row * n_cols
    dst = y_ptr + row * n_cols
    acc = tl.zeros([BLOCK_N], tl.float32)
    acc_sq = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(src + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x
        acc_sq += x * x
    mean = tl.sum(acc, axis=0) / n_cols
    # E[x^2] - mean^2 is fine for the benchmark's zero-mean inputs.
    var = tl.maximum(tl.sum(acc_sq, axis=0) / n_cols - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(src + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(dst + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def launch_meta(n_cols: int):
    """(kernel, constexprs, options) the wrapper uses for rows of ``n_cols``."""
    return row_or_loop(n_cols, layer_norm_row_kernel, layer_norm_loop_kernel, row_limit=ROW_LIMIT,
                       loop_block=LOOP_BLOCK)


def layer_norm(x, normalized_shape, weight, bias, eps=1e-5):
    """``torch.layer_norm(x, normalized_shape, weight, bias, eps)``; weight and bias required."""
    import torch

    normalized_shape = tuple(normalized_shape)
    if tuple(x.shape[x.dim() - len(normalized_shape):]) != normalized_shape:
        raise ValueError(f"layer_norm: {tuple(x.shape)} does not end in {normalized_shape}")
    x = x.contiguous()
    n_cols = numel(normalized_shape)
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    kernel, meta, options = launch_meta(n_cols)
    kernel[(x.numel() // n_cols,)](y, x, weight.contiguous(), bias.contiguous(), n_cols,
                                   float(eps), **meta, **options)
    return y


def specs_for(dtype: str, n_cols: int) -> list[CompileSpec]:
    kernel, meta, options = launch_meta(n_cols)
    t = TRITON_TYPES[dtype]
    return [make_spec(kernel,
                      types={"y_ptr": f"*{t}", "x_ptr": f"*{t}", "w_ptr": f"*{t}",
                             "b_ptr": f"*{t}", "n_cols": "i32", "eps": "fp32"},
                      constexprs=meta, options=options, label=f"{dtype}_N{n_cols}", dtype=dtype,
                      divisible_ints=divisible_by_16(n_cols=n_cols))]


# Representative classes: a one-tile row (4096x4096) and a streamed row (20x6x65536).
COMPILE_SPECS = [s for d in DTYPES for n in (4096, 6 * 65536) for s in specs_for(d, n)]
