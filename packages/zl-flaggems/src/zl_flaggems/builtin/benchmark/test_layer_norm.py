"""layer_norm over every dimension after the first, against torch.layer_norm."""

import pytest
from zl_flaggems.builtin.kernels.layer_norm import layer_norm as triton_layer_norm

from . import base, consts

DTYPES = ("float16", "float32", "bfloat16")
KINDS = ("reduction", "normalization")


def layer_norm_input_fn(shape, dtype, device):
    normalized = tuple(shape[1:])
    yield (base.generate_tensor_input(shape, dtype, device), normalized,
           base.generate_tensor_input(normalized, dtype, device),
           base.generate_tensor_input(normalized, dtype, device))


class LayerNormBenchmark(base.NormBenchmark):
    def tolerance(self, dtype, args, kwargs):
        # Statistics in float32 over long rows: allow for a different summation order.
        rtol, atol = super().tolerance(dtype, args, kwargs)
        return rtol, max(atol, 1e-4)


@pytest.mark.layer_norm
def test_layer_norm():
    import torch

    bench = LayerNormBenchmark(op_name="layer_norm", torch_op=torch.layer_norm,
                               gems_op=triton_layer_norm, input_fn=layer_norm_input_fn,
                               dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
