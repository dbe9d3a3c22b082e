"""What a cell does once before its first test, where a pipelined cell does not yet hold
its device: Triton's per-process cache key (zl_flaggems.cell.triton_prime), computed by
the warm parent and inherited by every forked cell, or by a cold cell when its
collection ends; and its imports' objects frozen out of later garbage collections.
Real Triton, real pytest cells on the fake checkout, a real zygote."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from zl_core.cells import cellguard, warmstart
from zl_core.interface.provider import WarmPlan
from zl_flaggems.common.gems_env import WARM_MODULES

pytest.importorskip("triton")
fake_flaggems = pytest.importorskip("fake_flaggems")

NODE = "benchmark/test_fake.py::test_fakeadd"


@pytest.fixture(autouse=True)
def fresh_zygotes():
    yield
    warmstart.close_all()


def identity(cell) -> dict:
    return json.loads((cell / "run_identity.json").read_text())


def test_the_warm_parent_computes_the_key_right_after_importing_triton():
    assert WARM_MODULES.index("zl_flaggems.cell.triton_prime") == WARM_MODULES.index("triton") + 1


def test_prime_computes_the_key_once_and_says_when_there_is_none(monkeypatch):
    probe = ("import time, zl_flaggems.cell.triton_prime as p\n"
             "from triton.runtime.cache import triton_key\n"
             "again = p.prime()\n"
             "print(p.PRIMED_S > 0, again < p.PRIMED_S / 10, triton_key.cache_info().currsize)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "1"]
    from zl_flaggems.cell import triton_prime

    monkeypatch.setattr(triton_prime, "_HOMES", ("no_such_triton_module_zl",))
    assert triton_prime.prime() is None


def test_a_cold_cell_computes_it_before_its_first_test(tmp_path):
    fg = fake_flaggems.build(tmp_path / "FlagGems")
    proc = fake_flaggems.run_cell(fg, tmp_path / "cell", NODE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    primed = identity(tmp_path / "cell")["triton_key"]
    assert primed["primed_in"] == "cell" and primed["seconds"] > 0
    assert identity(tmp_path / "cell")["frozen_objects"] > 10_000  # pytest's, Triton's, the tests' own


def test_a_warm_cell_inherits_it_and_times_the_same_rows(tmp_path):
    fg = fake_flaggems.build(tmp_path / "FlagGems")
    argv, env = fake_flaggems.cell_command(fg, tmp_path / "warm", NODE)
    zygote = warmstart.zygote_for(sys.executable, WarmPlan(modules=("triton", "zl_flaggems.cell.triton_prime")),
                                  {k: v for k, v in env.items() if k != "ZL_CELL_DIR"})
    assert zygote.imported == ("triton", "zl_flaggems.cell.triton_prime")
    assert zygote.report["frozen_objects"] > 10_000  # the parent's imports, frozen before any fork
    guard = cellguard.spawn(argv, cwd=fg, env=env, stdout=subprocess.PIPE, zygote=zygote.socket_path)
    output = guard.stdout.read().decode()
    guard.stdout.close()
    assert guard.wait(timeout=120) == 0, output
    assert identity(tmp_path / "warm")["triton_key"] == {"primed_in": "warm parent", "seconds": 0.0}
    cold = fake_flaggems.run_cell(fg, tmp_path / "cold", NODE)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    rows = {name: json.loads((tmp_path / name / "results.json").read_text())["rows"] for name in ("warm", "cold")}
    assert len(rows["warm"]) == len(rows["cold"]) > 0
    assert [(r["shape_label"], r["status"]) for r in rows["warm"]] == [(r["shape_label"], r["status"]) for r in rows["cold"]]
