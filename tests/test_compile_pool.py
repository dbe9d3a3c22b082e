"""The compile pool: an autotune sweep's candidates compiled up front under Triton's
AsyncCompileMode, then timed serially as always; anything wrong in the pool falls back to
the serial sweep, saying so. Real Triton 3.6 tuners (``Autotuner.run``); the kernel is a
stand-in whose ``run`` records how it was called (no device here to compile for)."""

from __future__ import annotations

import pytest

triton = pytest.importorskip("triton")

from triton.runtime import _async_compile
from triton.runtime.autotuner import Autotuner
from zl_flaggems.cell import markers
from zl_flaggems.cell.plugins import compile_pool

BLOCKS = (32, 64, 128, 256)


def kernel(x, n, BLOCK):  # the function a JIT kernel wraps
    return None


class StandIn:
    """What a tuner calls: ``run`` with the launch's arguments; records each call."""

    fn = staticmethod(kernel)

    def __init__(self, fail_warmup_for: int | None = None) -> None:
        self.calls: list[tuple[int, bool, bool]] = []  # (BLOCK, warmup, in async mode)
        self.fail_warmup_for = fail_warmup_for

    def run(self, *args, grid, warmup, **kwargs):
        block = kwargs["BLOCK"]
        self.calls.append((block, warmup, _async_compile.active_mode.get() is not None))
        if warmup and block == self.fail_warmup_for:
            raise RuntimeError("the compile pool broke")


def tuner(fn: StandIn) -> Autotuner:
    # BLOCK=64 is the fastest: the pick must be the same with and without the pool.
    def bench(kernel_call, quantiles):
        kernel_call()
        block = fn.calls[-1][0]
        return [1.0 if block == 64 else 2.0] * 3

    return Autotuner(fn, ["x", "n"], [triton.Config({"BLOCK": b}) for b in BLOCKS], ["n"],
                     None, None, do_bench=bench)


@pytest.fixture
def pool(monkeypatch, tmp_path):
    monkeypatch.setenv("ZL_COMPILE_WORKERS", "2")
    monkeypatch.setenv("ZL_CELL_DIR", str(tmp_path))
    compile_pool._state.update(pool=None, workers=1, off="", batches=0, compiled=0)
    markers.reset()
    compile_pool.pytest_configure(None)
    yield compile_pool
    compile_pool.pytest_unconfigure(None)


def test_every_candidate_compiles_up_front_then_the_sweep_times_them_serially(pool):
    fn = StandIn()
    sweep = tuner(fn)
    sweep.run(1, 1024, grid=(1,), warmup=False)
    warm = [(b, w, a) for b, w, a in fn.calls if w]
    timed = [(b, w, a) for b, w, a in fn.calls if not w]
    assert warm == [(b, True, True) for b in BLOCKS]  # all four, under AsyncCompileMode
    assert fn.calls[:4] == warm  # before any of them is timed
    assert [b for b, _, a in timed] == [*BLOCKS, 64] and not any(a for *_, a in timed)
    assert sweep.best_config.kwargs == {"BLOCK": 64}
    assert pool._state["compiled"] == 4 and pool._state["batches"] == 1
    sweep.run(1, 1024, grid=(1,), warmup=False)  # a key it knows: no sweep, nothing compiled
    assert sum(1 for _, w, _ in fn.calls if w) == 4


def test_a_pool_that_breaks_falls_back_to_the_serial_sweep_and_says_so(pool, capsys):
    fn = StandIn(fail_warmup_for=128)
    sweep = tuner(fn)
    sweep.run(1, 1024, grid=(1,), warmup=False)
    out = capsys.readouterr().out
    assert "PARALLEL_COMPILE_FALLBACK kernel=kernel reason=RuntimeError: the compile pool broke" in out
    assert markers.counts()["PARALLEL_COMPILE_FALLBACK"] == 1
    assert [b for b, w, _ in fn.calls if not w] == [*BLOCKS, 64]  # every candidate still timed
    assert sweep.best_config.kwargs == {"BLOCK": 64}  # the same pick
    sweep.run(1, 2048, grid=(1,), warmup=False)  # a new key: the pool stays off
    assert [b for b, w, _ in fn.calls if w] == [32, 64, 128]
    assert pool._state["off"].startswith("RuntimeError")


def test_without_workers_the_plugin_changes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("ZL_COMPILE_WORKERS", "1")
    monkeypatch.setenv("ZL_CELL_DIR", str(tmp_path))
    compile_pool.pytest_configure(None)
    assert "prune_configs" not in Autotuner.__dict__ or \
        not hasattr(Autotuner.__dict__["prune_configs"], "__wrapped__")
    fn = StandIn()
    tuner(fn).run(1, 1024, grid=(1,), warmup=False)
    assert not any(w for _, w, _ in fn.calls)
    compile_pool.pytest_unconfigure(None)
