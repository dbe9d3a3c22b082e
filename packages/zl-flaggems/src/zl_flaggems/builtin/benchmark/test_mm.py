"""mm: the autotuned fp16/bf16 tensor-core GEMM against torch.mm."""

import pytest
from zl_flaggems.builtin.kernels.mm import mm as triton_mm

from . import base, consts

DTYPES = ("float16", "bfloat16")
KINDS = ("gemm", "tensor-core", "autotuned")


def mm_input_fn(b, m, n, k, dtype, device):
    yield (base.generate_tensor_input((m, k), dtype, device),
           base.generate_tensor_input((k, n), dtype, device))


@pytest.mark.mm
def test_mm():
    import torch

    bench = base.BlasBenchmark(op_name="mm", torch_op=torch.mm, gems_op=triton_mm,
                               input_fn=mm_input_fn, dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
