"""``gelu`` (exact, erf form): a pointwise kernel with a transcendental call.

Computed in float32 and stored in the input dtype, as torch does.
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
def gelu_kernel(out_ptr, x_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def gelu(x):
    """``torch.nn.functional.gelu(x)`` (approximate="none")."""
    import torch

    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        gelu_kernel[(triton.cdiv(n, META["BLOCK"]),)](out, x, n, **META, **OPTIONS)
    return out


def specs_for(dtype: str, n_elements: int) -> list[CompileSpec]:
    t = TRITON_TYPES[dtype]
    return [make_spec(gelu_kernel,
                      types={"out_ptr": f"*{t}", "x_ptr": f"*{t}", "n_elements": "i32"},
                      constexprs=dict(META), options=dict(OPTIONS), label=f"{dtype}_aligned",
                      dtype=dtype, divisible_ints=divisible_by_16(n_elements=n_elements))]


COMPILE_SPECS = [s for d in DTYPES for s in specs_for(d, 4096 * 4096)]
