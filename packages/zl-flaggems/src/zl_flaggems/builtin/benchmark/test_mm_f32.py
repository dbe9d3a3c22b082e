"""mm_f32: the float32 GEMM whose dot precision is Triton's default, against torch.mm."""

import pytest
from zl_flaggems.builtin.kernels.mm_f32 import mm_f32 as triton_mm_f32

from . import base, consts

DTYPES = ("float32",)
KINDS = ("gemm", "float32-dot")


def mm_input_fn(b, m, n, k, dtype, device):
    yield (base.generate_tensor_input((m, k), dtype, device),
           base.generate_tensor_input((k, n), dtype, device))


@pytest.mark.mm_f32
def test_mm_f32():
    import torch

    bench = base.BlasBenchmark(op_name="mm_f32", torch_op=torch.mm, gems_op=triton_mm_f32,
                               input_fn=mm_input_fn, dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
