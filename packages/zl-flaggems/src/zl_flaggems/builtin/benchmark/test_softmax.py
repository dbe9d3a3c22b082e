"""softmax over the last dimension against torch.softmax."""

import pytest
from zl_flaggems.builtin.kernels.softmax import softmax as triton_softmax

from . import base, consts

DTYPES = ("float16", "float32", "bfloat16")
KINDS = ("reduction",)


def softmax_input_fn(shape, dtype, device):
    yield base.generate_tensor_input(shape, dtype, device), -1


@pytest.mark.softmax
def test_softmax():
    import torch

    bench = base.UnaryReductionBenchmark(op_name="softmax", torch_op=torch.softmax,
                                         gems_op=triton_softmax, input_fn=softmax_input_fn,
                                         dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
