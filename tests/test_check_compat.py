"""A backend's compat plugins load in accuracy-test cells too: on a fake MUSA host (the
real MUSA backend plugin over a fake mthreads-gmi), a check cell of the fake FlagGems
checkout's tests/test_top_k_per_row_decode.py, which carries the stale CUDA-only guard
the MUSA compat plugin lifts from the benchmark of that name, runs its test instead of
skipping it. A real cell process, run by the core's run_cell."""

from __future__ import annotations

import json
import os
import sys

import fake_flaggems
import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_backend_musa.plugin as musa_plugin
from fake_tools import path_with, write_tool
from test_backend_musa import S5000_SAMPLE
from zl_core import PluginHost, hookimpl
from zl_core.cells.cell import run_cell
from zl_core.interface import contract
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest, CheckSpec
from zl_core.seal.correctness import read_report
from zl_flaggems.host.provider import FlagGemsProvider

pytest.importorskip("triton")

GUARDED_TEST = '''
import flag_gems
import pytest

# FlagGems' guard, word for word; the condition is its stand-in (no torch here).
pytestmark = pytest.mark.skipif(True, reason="CUDA device required")


@pytest.mark.fake
def test_accuracy_top_k_per_row_decode():
    assert flag_gems.vendor_name in ("mthreads", "nvidia")
'''
COMPAT = "zl_backend_musa.flaggems_compat"


class FlagGemsSuite:
    @hookimpl
    def zl_providers(self):
        return [FlagGemsProvider()]


@pytest.fixture
def musa_host(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "mthreads-gmi", S5000_SAMPLE)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    for key in ("MUSA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GEMS_VENDOR", "FLAGGEMS_VENDOR"):
        monkeypatch.delenv(key, raising=False)
    host = PluginHost()
    host.register(musa_plugin, name="musa", package="zl-backend-musa", version="0")
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0")
    host.register(FlagGemsSuite(), name="flaggems", package="tests", version="0")
    root = fake_flaggems.build(tmp_path / "FlagGems")
    (root / "tests" / "test_top_k_per_row_decode.py").write_text(GUARDED_TEST.lstrip("\n"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root / "stubs"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return host, root


def check_cell(host, root, backend_name: str, out):
    request = CellRequest(op=OpSpec.parse("fakemm:fake"), backend=host.get_backend(backend_name),
                          device="7", out_dir=out, python=sys.executable, source=str(root),
                          check=CheckSpec(file="tests/test_top_k_per_row_decode.py", select=("-m", "fake")),
                          timeout_s=120.0)
    outcome = run_cell(host, host.get_provider("flaggems"), request)
    identity = json.loads((out / "run_identity.json").read_text())
    return outcome, identity, read_report(out / contract.ACCURACY_REPORT), (out / "run.log").read_text()


def test_the_musa_compat_plugin_lifts_the_stale_guard_in_a_check_cell(musa_host, tmp_path):
    host, root = musa_host
    outcome, identity, result, log = check_cell(host, root, "musa", tmp_path / "check" / "A")
    assert outcome.rc == 0, log
    assert identity["plugins"][:2] == ["zl_flaggems.cell.plugins.phases", COMPAT]
    assert (result.passed, result.skipped, result.ok) == (1, 0, True)
    assert ("[zl musa-compat] removed 1 stale CUDA-only skip guard(s): "
            "1 from test_top_k_per_row_decode.py") in log


def test_another_backend_keeps_the_guard(musa_host, tmp_path):
    host, root = musa_host
    _outcome, identity, result, log = check_cell(host, root, "cuda", tmp_path / "check" / "A")
    assert COMPAT not in identity["plugins"]
    assert (result.passed, result.skipped) == (0, 1) and result.problem  # skipped: no pass
    assert "musa-compat" not in log
