"""Triton kernels of the built-in suite, one module per operator.

Every module imports with triton alone (torch is imported inside the python
wrappers only), so ``python -m zl_flaggems.cell.compile_only`` can compile them on a
machine with no device and no torch. Each module exposes:

* its ``@triton.jit`` kernels (``mm`` wraps its kernel in ``@triton.autotune``);
* a python wrapper named after the operator, with torch's calling convention;
* ``COMPILE_SPECS``: the kernel variants a benchmark run compiles, as
  :class:`~zl_flaggems.builtin.kernels._spec.CompileSpec` tuples.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Operator name -> module name; the benchmark file is ``benchmark/test_<op>.py``.
OPS = ("add", "gelu", "layer_norm", "mm", "mm_f32", "softmax", "sum")


def load(op: str) -> ModuleType:
    """The kernel module of ``op``; KeyError names the known operators."""
    if op not in OPS:
        raise KeyError(f"no built-in kernels for operator {op!r}; known: {', '.join(OPS)}")
    return importlib.import_module(f"{__name__}.{op}")
