"""``softmax`` over the last dimension: a row reduction (max, exp, sum).

Rows up to ``ROW_LIMIT`` columns are held in one tile (``softmax_row_kernel``);
longer rows stream through ``softmax_loop_kernel`` with an online max/sum.
Math is done in float32 whatever the storage dtype.
"""

from __future__ import annotations

import triton
import triton.language as tl
from zl_flaggems.builtin.kernels._spec import (
    TRITON_TYPES,
    CompileSpec,
    divisible_by_16,
    make_spec,
    row_or_loop,
)

DTYPES = ("float16", "float32", "bfloat16")
ROW_LIMIT = 8192
LOOP_BLOCK = 4096


@triton.jit
def softmax_row_kernel(out_ptr, in_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * n_cols + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_loop_kernel(out_ptr, in_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    src = in_ptr + row * n_cols
    dst = out_ptr + row * n_cols
    # Per-lane running max and sum; a lane that has only seen padding keeps -inf / 0.
    run_max = tl.full([BLOCK_N], -float("inf"), tl.float32)
    run_sum = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(src + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(run_max, x)
        empty = new_max == -float("inf")
        rescale = tl.where(empty, 0.0, tl.exp(run_max - new_max))
        run_sum = run_sum * rescale + tl.where(empty, 0.0, tl.exp(x - new_max))
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    lane_scale = tl.where(run_max == -float("inf"), 0.0, tl.exp(run_max - row_max))
    total = tl.sum(run_sum * lane_scale, axis=0)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(src + cols, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(dst + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def launch_meta(n_cols: int):
    """(kernel, constexprs, options) the wrapper uses for rows of ``n_cols``."""
    return row_or_loop(n_cols, softmax_row_kernel, softmax_loop_kernel, row_limit=ROW_LIMIT,
                       loop_block=LOOP_BLOCK)


def softmax(x, dim=-1):
    """``torch.softmax(x, dim)`` for the last dimension."""
    import torch

    if dim not in (-1, x.dim() - 1):
        raise ValueError(f"softmax: only the last dimension is supported, got dim={dim}")
    x = x.contiguous()
    n_cols = x.shape[-1] if x.dim() else 1
    out = torch.empty_like(x)
    if x.numel() == 0:
        return out
    kernel, meta, options = launch_meta(n_cols)
    kernel[(x.numel() // n_cols,)](out, x, n_cols, **meta, **options)
    return out


def specs_for(dtype: str, n_cols: int) -> list[CompileSpec]:
    kernel, meta, options = launch_meta(n_cols)
    t = TRITON_TYPES[dtype]
    return [make_spec(kernel, types={"out_ptr": f"*{t}", "in_ptr": f"*{t}", "n_cols": "i32"},
                      constexprs=meta, options=options, label=f"{dtype}_N{n_cols}", dtype=dtype,
                      divisible_ints=divisible_by_16(n_cols=n_cols))]


# Representative classes: a one-tile row (4096x4096) and a streamed row (1-D 2**20).
COMPILE_SPECS = [s for d in DTYPES for n in (4096, 1 << 20) for s in specs_for(d, n)]
