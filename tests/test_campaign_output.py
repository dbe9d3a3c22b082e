"""A campaign's output explains itself: what a cell line's columns mean (once), which
cell is running, what the table counts, and a next step the campaign allows."""

from __future__ import annotations

import pytest
from test_bad_input import failing  # noqa: F401 - the fixture: an in-test suite of real processes
from zl_core.cli import main


def test_cell_lines_say_what_runs_and_what_their_columns_mean(failing, tmp_path, capsys):  # noqa: F811
    assert main(["screen", "--suite", "failing", "--ops", "fine", "--runs-root", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()  # progress: stderr
    legends = [ln for ln in lines if ln.startswith("each cell line:")]
    assert len(legends) == 1 and "[switch value]" in legends[0] and "ttgir=.ttgir files" in legends[0]
    running = lines.index("[1/2] fine A [0] running ...")
    finished = next(i for i, ln in enumerate(lines) if ln.startswith("[1/2] fine A [0] rc=0 rows=0 ttgir=0"))
    assert running < finished
    results = out.splitlines()  # the verdicts, their legend and the next step: stdout
    assert any(ln.startswith("kernels A/B: distinct Triton kernels") for ln in results)
    assert results[-1].endswith("then: zl ab --rounds 8")
    assert not any(ln.startswith(("each cell line:", "[1/2]")) for ln in results)


def test_the_ir_only_screen_does_not_send_the_user_to_ab_rounds(tmp_path, capsys, monkeypatch):
    pytest.importorskip("triton")
    import zl_core.plugins.host as host_module
    from zl_core import PluginHost

    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())
    assert main(["screen", "--compile-only", "--backend", "cuda", "--switch", "DISABLE_MMA_V3",
                 "--ops", "add", "--runs-root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(IR-only: compiled, nothing timed)" in out
    assert "zl ab" not in out.splitlines()[-1] and "A/B rounds need a screen on a device" in out


def test_without_a_device_the_builtin_screen_is_ir_only_and_says_so(tmp_path, capsys, monkeypatch):
    pytest.importorskip("triton")
    import os
    import sys

    import zl_core.plugins.host as host_module
    from zl_core import PluginHost

    for key in [k for k in os.environ if k.endswith("_VISIBLE_DEVICES") or k.startswith("ZL_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))  # no vendor tool finds a device
    monkeypatch.setitem(sys.modules, "torch", None)  # nor a torch namespace
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())
    assert main(["screen", "--switch", "DISABLE_MMA_V3", "--ops", "add", "--runs-root", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "zl screen: no device found by any installed backend" in err
    assert "running the IR-only screen instead (TTGIR compiled for cuda:90, no latencies)" in err
    assert "IR-only for cuda:90" in err
    assert "(IR-only: compiled, nothing timed)" in out  # the result says it too
