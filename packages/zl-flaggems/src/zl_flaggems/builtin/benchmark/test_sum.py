"""sum of every element (two kernels) against torch.sum."""

import math

import pytest
from zl_flaggems.builtin.kernels.sum import sum as triton_sum

from . import base, consts

DTYPES = ("float16", "float32", "bfloat16")
KINDS = ("reduction", "multi-kernel")


class FullReductionBenchmark(base.UnaryReductionBenchmark):
    def tolerance(self, dtype, args, kwargs):
        # The result grows like sqrt(numel) and so does the summation-order error.
        rtol, atol = super().tolerance(dtype, args, kwargs)
        return rtol, atol * math.sqrt(args[0].numel())


@pytest.mark.sum
def test_sum():
    import torch

    bench = FullReductionBenchmark(op_name="sum", torch_op=torch.sum, gems_op=triton_sum,
                                   dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
