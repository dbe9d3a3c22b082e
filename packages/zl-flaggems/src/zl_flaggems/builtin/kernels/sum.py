"""``sum`` of every element: a two-kernel reduction.

``sum_partial_kernel`` reduces ``BLOCK``-element chunks to float32 partials;
``sum_final_kernel`` (one program) folds the partials and stores the result in
the input dtype, as ``torch.sum`` does for floating inputs.
"""

from __future__ import annotations

import triton
import triton.language as tl
from zl_flaggems.builtin.kernels._spec import (
    TRITON_TYPES,
    CompileSpec,
    cdiv,
    divisible_by_16,
    make_spec,
)

DTYPES = ("float16", "float32", "bfloat16")
PARTIAL_META = {"BLOCK": 4096}
PARTIAL_OPTIONS = {"num_warps": 8, "num_stages": 1}
FINAL_META = {"BLOCK": 1024}
FINAL_OPTIONS = {"num_warps": 4, "num_stages": 1}


@triton.jit
def sum_partial_kernel(partial_ptr, x_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0).to(tl.float32)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def sum_final_kernel(out_ptr, partial_ptr, n_partials, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_partials, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offsets, mask=offsets < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def sum(x):
    """``torch.sum(x)`` for floating tensors (< 2**31 elements)."""
    import torch

    x = x.contiguous()
    n = x.numel()
    out = torch.empty((), device=x.device, dtype=x.dtype)
    if n == 0:
        return out.zero_()
    n_partials = triton.cdiv(n, PARTIAL_META["BLOCK"])
    partials = torch.empty((n_partials,), device=x.device, dtype=torch.float32)
    sum_partial_kernel[(n_partials,)](partials, x, n, **PARTIAL_META, **PARTIAL_OPTIONS)
    sum_final_kernel[(1,)](out, partials, n_partials, **FINAL_META, **FINAL_OPTIONS)
    return out


def specs_for(dtype: str, n_elements: int) -> list[CompileSpec]:
    t = TRITON_TYPES[dtype]
    n_partials = cdiv(n_elements, PARTIAL_META["BLOCK"])
    label = f"{dtype}_aligned"
    return [
        make_spec(sum_partial_kernel,
                  types={"partial_ptr": "*fp32", "x_ptr": f"*{t}", "n_elements": "i32"},
                  constexprs=dict(PARTIAL_META), options=dict(PARTIAL_OPTIONS), label=label,
                  dtype=dtype, divisible_ints=divisible_by_16(n_elements=n_elements)),
        make_spec(sum_final_kernel,
                  types={"out_ptr": f"*{t}", "partial_ptr": "*fp32", "n_partials": "i32"},
                  constexprs=dict(FINAL_META), options=dict(FINAL_OPTIONS), label=label,
                  dtype=dtype, divisible_ints=divisible_by_16(n_partials=n_partials)),
    ]


COMPILE_SPECS = [s for d in DTYPES for s in specs_for(d, 4096 * 4096)]
