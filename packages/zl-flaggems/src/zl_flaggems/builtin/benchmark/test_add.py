"""add: elementwise x + y against torch.add (the suite's pure-memory control)."""

import pytest
from zl_flaggems.builtin.kernels.add import add as triton_add

from . import base, consts

DTYPES = ("float16", "float32", "bfloat16")
KINDS = ("pointwise",)


@pytest.mark.add
def test_add():
    import torch

    bench = base.BinaryPointwiseBenchmark(op_name="add", torch_op=torch.add, gems_op=triton_add,
                                          dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
