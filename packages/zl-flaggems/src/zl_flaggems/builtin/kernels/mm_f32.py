"""``mm_f32``: a float32 GEMM whose ``tl.dot`` states no precision.

Written without ``input_precision``/``allow_tf32`` on purpose: the dot then takes
Triton's default (``TRITON_F32_DEFAULT``, tf32 when unset), so that switch
reaches this kernel's TTGIR. One fixed tile configuration (no autotuning).
"""

from __future__ import annotations

import triton
import triton.language as tl
from zl_flaggems.builtin.kernels._spec import CompileSpec, divisible_by_16, make_spec

DTYPES = ("float32",)
META = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}
OPTIONS = {"num_warps": 8, "num_stages": 3}


@triton.jit
def mm_f32_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
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
        acc += tl.dot(a, b)  # no input_precision: TRITON_F32_DEFAULT decides
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def mm_f32(a, b):
    """``torch.mm`` for 2-D float32 tensors (Triton's default dot precision)."""
    import torch

    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"mm_f32: cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    mm_f32_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), **META, **OPTIONS)
    return c


def specs_for(M: int, N: int, K: int, shape_class: str) -> list[CompileSpec]:
    ints = {"M": M, "N": N, "K": K, "stride_am": K, "stride_bk": N, "stride_cm": N}
    return [make_spec(
        mm_f32_kernel,
        types={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", **{n: "i32" for n in ints}},
        constexprs={"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, **META},
        options=dict(OPTIONS), label=f"float32_{shape_class}", dtype="float32",
        divisible_ints=divisible_by_16(**ints))]


COMPILE_SPECS = specs_for(4096, 4096, 4096, "aligned")
