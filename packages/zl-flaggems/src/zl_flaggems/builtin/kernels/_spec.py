"""What compile-only needs to build one kernel variant without a device.

A :class:`CompileSpec` reproduces what Triton's launcher would hand the
compiler at run time: the argument types, the constexprs (including integer
arguments equal to 1, which the launcher turns into constexprs), the launch
options, and the 16-divisibility hints the launcher derives from aligned
pointers and integers divisible by 16. Without those hints the TTGIR of a
compile-only cell would not be the TTGIR the benchmark runs (vector widths and
layouts depend on them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import triton
from triton.runtime.jit import JITFunction

#: torch dtype name -> Triton element type in signatures.
TRITON_TYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}
#: Attribute the launcher attaches to a 16-divisible argument.
DIVISIBILITY = [["tt.divisibility", 16]]


class CompileSpec(NamedTuple):
    """One variant of one kernel: ``(kernel, signature, constexprs, options, label, ...)``."""

    kernel: Any  # the @triton.jit function (an autotuner is unwrapped by make_spec)
    signature: dict[str, str]  # every parameter, in order; constexprs say "constexpr"
    constexprs: dict[str, Any]
    options: dict[str, Any]  # num_warps, num_stages
    label: str  # the <shape> folder of the dump: "<dtype>_<shape class>"
    dtype: str = ""  # lets a cell compile only the dtypes it was asked for
    divisible: tuple[str, ...] = ()  # parameters the launcher marks 16-divisible

    @property
    def name(self) -> str:
        return self.kernel.__name__

    def attrs(self) -> dict[tuple[int, ...], list]:
        """The ``attrs`` argument of ``ASTSource``: path of a parameter -> hints."""
        names = list(self.signature)
        return {(names.index(n),): DIVISIBILITY for n in self.divisible}

    def variant_key(self) -> dict[str, Any]:
        """What distinguishes this variant from its siblings (for variant names)."""
        return {**self.constexprs, **self.options}


def jit_of(kernel: Any) -> JITFunction:
    """The JITFunction under autotune/heuristics wrappers."""
    seen = kernel
    while not isinstance(seen, JITFunction):
        inner = getattr(seen, "fn", None)
        if inner is None:
            raise TypeError(f"{kernel!r} is not a Triton kernel")
        seen = inner
    return seen


def make_spec(kernel: Any, *, types: Mapping[str, str], constexprs: Mapping[str, Any],
              options: Mapping[str, Any], label: str, dtype: str,
              divisible_ints: Iterable[str] = ()) -> CompileSpec:
    """Build a spec with the signature in parameter order, checking nothing is missing.

    Pointer arguments are marked 16-divisible (torch allocations are), plus the
    integer arguments named in ``divisible_ints``.
    """
    jit = jit_of(kernel)
    signature: dict[str, str] = {}
    for param in jit.params:
        if param.is_constexpr or param.name in constexprs:
            if param.name not in constexprs:
                raise ValueError(f"{jit.__name__}: no value for constexpr {param.name!r}")
            signature[param.name] = "constexpr"
        elif param.name in types:
            signature[param.name] = types[param.name]
        else:
            raise ValueError(f"{jit.__name__}: no type for argument {param.name!r}")
    unknown = set(types) - set(signature)
    if unknown:
        raise ValueError(f"{jit.__name__}: types given for unknown arguments {sorted(unknown)}")
    divisible = [n for n, t in signature.items() if t.startswith("*")]
    for name in divisible_ints:
        if signature.get(name, "").startswith("i"):
            divisible.append(name)
        else:
            raise ValueError(f"{jit.__name__}: {name!r} is not an integer argument")
    return CompileSpec(kernel=jit, signature=signature, constexprs=dict(constexprs),
                       options=dict(options), label=label, dtype=dtype,
                       divisible=tuple(divisible))


def next_power_of_2(n: int) -> int:
    return triton.next_power_of_2(int(n))


def row_or_loop(n_cols: int, row_kernel: Any, loop_kernel: Any, *, row_limit: int,
                loop_block: int) -> tuple[Any, dict[str, int], dict[str, int]]:
    """(kernel, constexprs, options) of a row-wise operator for rows of ``n_cols``:
    one tile per row up to ``row_limit`` columns, else a loop over ``loop_block``."""
    if n_cols <= row_limit:
        block = next_power_of_2(n_cols)
        warps = 4 if block <= 1024 else 8 if block <= 4096 else 16
        return row_kernel, {"BLOCK_N": block}, {"num_warps": warps, "num_stages": 1}
    return loop_kernel, {"BLOCK_N": loop_block}, {"num_warps": 8, "num_stages": 1}


def divisible_by_16(**ints: int) -> list[str]:
    """Names of the integers the launcher would mark 16-divisible."""
    return [name for name, value in ints.items() if value % 16 == 0]


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def numel(shape: Iterable[int]) -> int:
    return math.prod(int(s) for s in shape)
