"""``mm``: an autotuned fp16/bf16 GEMM on tensor cores (``tl.dot``).

The kernel a compiler switch about matrix units touches first: on sm90 its
TTGIR uses ``warp_group_dot`` (MMA v3), and ``DISABLE_MMA_V3=1`` turns it into
MMA v2 ``tt.dot``. Inputs are row-major (``a`` is M x K, ``b`` is K x N).

Its dot states ``input_precision="ieee"`` (as FlagGems' GEMMs do with
``allow_tf32=False``): an fp16/bf16 dot has no reduced-precision mode, but a dot
that states none carries ``TRITON_F32_DEFAULT`` as an ``inputPrecision``
attribute in its TTGIR, and that switch would then mark this GEMM IR_CHANGED
although its code is the same. So ``TRITON_F32_DEFAULT`` reaches ``mm_f32`` only,
and ``DISABLE_MMA_V3`` both GEMMs.
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

DTYPES = ("float16", "bfloat16")

# The sweep a benchmark run autotunes over: wide and narrow tiles, deep and
# shallow pipelines (shared memory stays under sm80's 164 KiB in all of them).
CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP_M: tl.constexpr):
    # Grouped ordering of output tiles so neighbouring programs share A rows in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")  # see the module docstring
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, c, mask=(rows[:, None] < M) & (cols[None, :] < N))


def mm(a, b):
    """``torch.mm`` for 2-D fp16/bf16 tensors."""
    import torch

    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm: cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1))
    return c


def specs_for(dtype: str, M: int, N: int, K: int, shape_class: str) -> list[CompileSpec]:
    """Every autotune config for contiguous M x K @ K x N of ``dtype``."""
    t = TRITON_TYPES[dtype]
    # Contiguous inputs: the unit strides reach the compiler as constexpr 1.
    ints = {"M": M, "N": N, "K": K, "stride_am": K, "stride_bk": N, "stride_cm": N}
    specs = []
    for config in CONFIGS:
        specs.append(make_spec(
            mm_kernel,
            types={"a_ptr": f"*{t}", "b_ptr": f"*{t}", "c_ptr": f"*{t}",
                   **{name: "i32" for name in ints}},
            constexprs={"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, **config.kwargs},
            options={"num_warps": config.num_warps, "num_stages": config.num_stages},
            label=f"{dtype}_{shape_class}", dtype=dtype,
            divisible_ints=divisible_by_16(**ints)))
    return specs


# Representative shape class: the core shapes are all 16-aligned squares.
COMPILE_SPECS = [s for d in DTYPES for s in specs_for(d, 4096, 4096, 4096, "aligned")]
