"""gelu (erf form) against torch.nn.functional.gelu."""

import pytest
from zl_flaggems.builtin.kernels.gelu import gelu as triton_gelu

from . import base, consts

DTYPES = ("float16", "float32", "bfloat16")
KINDS = ("pointwise", "transcendental")


@pytest.mark.gelu
def test_gelu():
    import torch

    bench = base.UnaryPointwiseBenchmark(op_name="gelu", torch_op=torch.nn.functional.gelu,
                                         gems_op=triton_gelu, dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
