"""``add``: elementwise ``x + y`` on equal-shaped tensors (pure memory traffic).

The control case of the suite: no dot and no reduction, so switches about
matrix units or reductions must leave its TTGIR unchanged.
"""

from __future__ import annotations

import triton
import triton.language as tl
from zl_flaggems.builtin.kernels._spec import (
    TRITON_TYPES,
    CompileSpec,
    divisible_by_16,
    make_spec,
)

DTYPES = ("float16", "float32", "bfloat16")
META = {"BLOCK": 1024}
OPTIONS = {"num_warps": 4, "num_stages": 1}


@triton.jit
def add_kernel(out_ptr, x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y):
    """``torch.add(x, y)`` for two tensors of one shape and dtype (< 2**31 elements)."""
    import torch

    if x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError(f"add: needs equal shapes and dtypes, got {tuple(x.shape)} {x.dtype} "
                         f"and {tuple(y.shape)} {y.dtype}")
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        add_kernel[(triton.cdiv(n, META["BLOCK"]),)](out, x, y, n, **META, **OPTIONS)
    return out


def specs_for(dtype: str, n_elements: int) -> list[CompileSpec]:
    t = TRITON_TYPES[dtype]
    return [make_spec(add_kernel,
                      types={"out_ptr": f"*{t}", "x_ptr": f"*{t}", "y_ptr": f"*{t}",
                             "n_elements": "i32"},
                      constexprs=dict(META), options=dict(OPTIONS), label=f"{dtype}_aligned",
                      dtype=dtype, divisible_ints=divisible_by_16(n_elements=n_elements))]


# Every core shape has a 16-divisible element count: one class per dtype.
COMPILE_SPECS = [s for d in DTYPES for s in specs_for(d, 4096 * 4096)]
