"""A fixture for re-tuned campaigns on the fake FlagGems checkout (tests/fake_flaggems.py):
two operators behind real Triton Autotuners whose candidates' device time the switch
(``FAKE_SWITCH``) sets. ``fakeretuned``'s best config changes under the switch (BLOCK=32
off, BLOCK=64 on: the switch slows the old pick and speeds the new one); ``fakesteady``'s
does not (BLOCK=32 either way, the switch speeds it)."""

from __future__ import annotations

from pathlib import Path

#: Device milliseconds of one launch, by operator, switch value and BLOCK.
COSTS = {"fakeretuned": {"0": {32: 0.010, 64: 0.013}, "1": {32: 0.011, 64: 0.008}},
         "fakesteady": {"0": {32: 0.010, 64: 0.015}, "1": {32: 0.009, 64: 0.015}}}

BENCHMARK = f'''
import os

import pytest
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner, Config

import fakedevice

from . import base

COSTS = {COSTS!r}


@triton.jit
def retuned_kernel(x, n, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))


class StandIn:
    """What the tuner launches: each launch costs its config's device time under the switch."""

    def __init__(self, op):
        self.op, self.block = op, None

    def cost(self, block):
        return COSTS[self.op][os.environ.get("FAKE_SWITCH", "0")][block]

    def run(self, *args, grid=None, warmup=False, **kwargs):
        self.block = kwargs["BLOCK"]
        if not warmup:
            fakedevice.launch(self.cost(self.block))


def tuned_op(op):
    kernel = StandIn(op)

    def bench(kernel_call, quantiles=None):  # the sweep times each candidate at its cost
        kernel_call()
        return [kernel.cost(kernel.block)] * 3

    tuner = Autotuner(retuned_kernel, retuned_kernel.arg_names,
                      [Config({{"BLOCK": 32}}), Config({{"BLOCK": 64}})], ["n"], None, None, do_bench=bench)
    tuner.fn = kernel
    return lambda x: tuner.run(x, x.shape[0], grid=(1,))


@pytest.mark.fake
def test_fakeretuned():
    base.GenericBenchmark(op_name="fakeretuned", torch_op=base.op_cost(0.02),
                          gems_op=tuned_op("fakeretuned"), input_fn=base.unary_input).run()


@pytest.mark.fake
def test_fakesteady():
    base.GenericBenchmark(op_name="fakesteady", torch_op=base.op_cost(0.02),
                          gems_op=tuned_op("fakesteady"), input_fn=base.unary_input).run()
'''


def add_to(checkout: Path) -> Path:
    """Write the fixture's benchmark file into a fake checkout; returns its path."""
    path = Path(checkout) / "benchmark" / "test_fake_retuned.py"
    path.write_text(BENCHMARK.lstrip("\n"), encoding="utf-8")
    return path
