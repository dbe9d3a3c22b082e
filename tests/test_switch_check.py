"""The switch check: the cells' compiler is asked whether it reads the switch before
any cell runs (real Triton in this interpreter, and a stand-in FlagTree build)."""

from __future__ import annotations

import json
import sys

import pytest
import zl_core.plugins.host as host_module
from zl_core import Backend, PluginHost
from zl_core.cli import main
from zl_core.foundation.switches import resolve_sides
from zl_core.interface.provider import Provider
from zl_core.interface.switch_check import IneffectiveSwitchError, SwitchReport, check_switch, lookalikes

CUDA = Backend(name="cuda", default_switch="FLAGTREE_RLC_ENHANCE")
STOCK_KNOWN = ("DISABLE_MMA_V3", "DISABLE_MMA_V5", "TRITON_F32_DEFAULT", "TRITON_DEFAULT_FP_FUSION",
               "TRITON_CACHE_DIR", "MLIR_ENABLE_DUMP")


def test_lookalikes_are_close_spellings_then_shared_words():
    assert set(lookalikes("DISABLE_MMA_V4", STOCK_KNOWN)[:2]) == {"DISABLE_MMA_V3", "DISABLE_MMA_V5"}
    assert lookalikes("TRITON_F32_DEFAUL", STOCK_KNOWN) == ["TRITON_F32_DEFAULT"]
    assert lookalikes("FLAGTREE_RLC_ENHANCE", STOCK_KNOWN) == []
    flagtree = (*STOCK_KNOWN, "FLAGTREE_MUSA_RLC_ENHANCE", "FLAGTREE_MUSA_RLC_PHASE_MASK")
    assert "FLAGTREE_MUSA_RLC_ENHANCE" in lookalikes("FLAGTREE_RLC_ENHANCE", flagtree)


def _ask(report):
    asked = []

    def ask(names, a_values, b_values):
        asked.append((names, a_values, b_values))
        return report

    return ask, asked


def test_an_unread_default_switch_is_refused_with_stock_suggestions():
    report = SwitchReport(compiler="triton 3.6.0 in /py", unread=("FLAGTREE_RLC_ENHANCE",),
                          known=STOCK_KNOWN, suggestions=("--switch DISABLE_MMA_V3 (GEMMs)",))
    ask, asked = _ask(report)
    sides = resolve_sides(CUDA, None, None, None)
    with pytest.raises(IneffectiveSwitchError) as info:
        check_switch(ask, sides, backend=CUDA, defaulted=True, force=False)
    message = str(info.value)
    assert "\n" not in message and info.value.exit_code == 2
    assert message.startswith("the cuda backend's default switch FLAGTREE_RLC_ENHANCE is not read "
                              "by triton 3.6.0 in /py")
    assert "--switch DISABLE_MMA_V3 (GEMMs)" in message and "--force-switch" in message
    assert asked == [(["FLAGTREE_RLC_ENHANCE"], {"FLAGTREE_RLC_ENHANCE": "0"},
                      {"FLAGTREE_RLC_ENHANCE": "1"})]


def test_a_misspelled_switch_names_the_lookalikes_it_does_read():
    report = SwitchReport(compiler="triton 3.6.0 in /py", unread=("DISABLE_MMA_V4",), known=STOCK_KNOWN)
    sides = resolve_sides(CUDA, "DISABLE_MMA_V4", None, None)
    with pytest.raises(IneffectiveSwitchError, match=r"look alike: DISABLE_MMA_V[35], DISABLE_MMA_V[35]"):
        check_switch(_ask(report)[0], sides, backend=CUDA, defaulted=False, force=False)


def test_force_runs_it_anyway_and_says_so(caplog):
    report = SwitchReport(compiler="triton 3.6.0 in /py", unread=("DISABLE_MMA_V4",), known=STOCK_KNOWN)
    sides = resolve_sides(CUDA, "DISABLE_MMA_V4", None, None)
    assert check_switch(_ask(report)[0], sides, backend=CUDA, defaulted=False, force=True) is report
    [said] = [r for r in caplog.records if r.name == "zl_core.interface.switch_check"]
    assert said.levelname == "WARNING"  # a forced switch is worth a warning, even under -q
    assert said.message.startswith("note: switch DISABLE_MMA_V4 is not read") and "--force-switch" in said.message


def test_a_provider_running_no_triton_and_an_aa_control_are_not_held():
    assert Provider.switch_report(None, python=sys.executable, names=["X"], a_values={}, b_values={}) is None
    ask, asked = _ask(None)
    assert check_switch(ask, resolve_sides(CUDA, None, None, None), backend=CUDA, defaulted=True,
                        force=False) is None
    aa = resolve_sides(CUDA, None, None, None, aa=True)
    assert check_switch(ask, aa, backend=CUDA, defaulted=True, force=False) is None
    assert len(asked) == 1  # the A/A control was not even asked about


def test_a_compiler_that_cannot_be_asked_is_a_note_not_a_refusal(caplog):
    report = SwitchReport(compiler="the Triton of /py", error="cannot import triton: ImportError: x")
    sides = resolve_sides(CUDA, "DISABLE_MMA_V3", None, None)
    check_switch(_ask(report)[0], sides, backend=CUDA, defaulted=False, force=False)
    assert [(r.levelname, r.message) for r in caplog.records] == [(
        "WARNING", ("note: could not ask the Triton of /py whether it reads DISABLE_MMA_V3 "
                    "(cannot import triton: ImportError: x); the cells' preflight will say more"))]


# -- the real question, asked of a real Triton ---------------------------------------------


def test_stock_triton_reads_its_switches_and_not_flagtrees():
    pytest.importorskip("triton")
    from zl_flaggems.host.switch_probe import ask_triton

    names = ["DISABLE_MMA_V3", "TRITON_F32_DEFAULT", "FLAGTREE_RLC_ENHANCE", "DISABLE_MMA_V33"]
    report = ask_triton(sys.executable, names, {n: "0" for n in names},
                        {"DISABLE_MMA_V3": "1", "TRITON_F32_DEFAULT": "tf32",
                         "FLAGTREE_RLC_ENHANCE": "1", "DISABLE_MMA_V33": "1"})
    import triton

    assert report.error == "" and report.compiler == f"triton {triton.__version__} in {sys.executable}"
    assert report.read["DISABLE_MMA_V3"] == "compile-cache key"
    assert report.read["TRITON_F32_DEFAULT"] == "compile-cache key, knob"
    assert report.unread == ("FLAGTREE_RLC_ENHANCE", "DISABLE_MMA_V33")
    assert any(s.startswith("--switch DISABLE_MMA_V3 ") for s in report.suggestions)
    assert "DISABLE_MMA_V3" in lookalikes("DISABLE_MMA_V33", report.known)


FLAGTREE = {
    "triton/__init__.py": "__version__ = '3.6.0+flagtree'\n",
    "triton/_C/__init__.py": "",
    # FlagTree's C++ side: its cache-key list includes its NVIDIA RLC switch.
    "triton/_C/libtriton.py": (
        "import os\n"
        "_NAMES = ('DISABLE_MMA_V3', 'FLAGTREE_RLC_ENHANCE')\n"
        "def get_cache_invalidating_env_vars():\n"
        "    return {n: os.environ[n] for n in _NAMES if os.environ.get(n)}\n"),
    "triton/knobs.py": "class base_knobs:\n    pass\n",
    # A vendor backend that reads its switch in Python only.
    "triton/backends/__init__.py": "",
    "triton/backends/musa/__init__.py": "",
    "triton/backends/musa/compiler.py": (
        "import os\n"
        "def rlc_enabled():\n"
        "    return os.getenv('FLAGTREE_MUSA_RLC_ENHANCE', '0') == '1'\n"),
}


def test_a_flagtree_build_is_asked_in_the_cells_interpreter(tmp_path, monkeypatch):
    from zl_flaggems.host.switch_probe import ask_triton

    for rel, text in FLAGTREE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    names = ["FLAGTREE_RLC_ENHANCE", "FLAGTREE_MUSA_RLC_ENHANCE", "FLAGTREE_HCU_RLC_ENHANCE"]
    report = ask_triton(sys.executable, names, {n: "0" for n in names}, {n: "1" for n in names})
    assert report.compiler == f"triton 3.6.0+flagtree in {sys.executable}"
    assert report.read == {"FLAGTREE_RLC_ENHANCE": "compile-cache key",
                           "FLAGTREE_MUSA_RLC_ENHANCE": "read in triton's Python"}
    assert report.unread == ("FLAGTREE_HCU_RLC_ENHANCE",)
    assert "FLAGTREE_MUSA_RLC_ENHANCE" in lookalikes("FLAGTREE_HCU_RLC_ENHANCE", report.known)
    # So the default switch of the CUDA backend applies here, where it is read.
    sides = resolve_sides(CUDA, None, None, None)
    assert check_switch(lambda n, a, b: report, sides, backend=CUDA, defaulted=True,
                        force=False) is report


def test_an_interpreter_without_triton_cannot_be_asked(tmp_path):
    from zl_flaggems.host.switch_probe import ask_triton

    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'no triton here' >&2\nexit 1\n")
    python.chmod(0o755)
    report = ask_triton(str(python), ["DISABLE_MMA_V3"], {}, {"DISABLE_MMA_V3": "1"})
    assert report.error == "the probe died: no triton here"


# -- through the command line: refused before any cell runs ------------------------------


@pytest.fixture
def installed(monkeypatch):
    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())


def test_screen_refuses_the_unread_default_switch_before_any_cell(installed, tmp_path, capsys):
    pytest.importorskip("triton")
    rc = main(["screen", "--ops", "add", "--compile-only", "--backend", "cuda",
               "--runs-root", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "default switch FLAGTREE_RLC_ENHANCE is not read by triton" in err
    assert "--switch DISABLE_MMA_V3" in err
    assert not (tmp_path / "runs").exists()


def test_screen_with_force_switch_runs_and_says_what_it_forced(installed, tmp_path, capsys):
    pytest.importorskip("triton")
    rc = main(["screen", "--ops", "add", "--compile-only", "--backend", "cuda", "--switch",
               "DISABLE_MMA_V4", "--force-switch", "--runs-root", str(tmp_path / "runs")])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert "note: switch DISABLE_MMA_V4 is not read by triton" in err  # a warning: stderr
    assert any(line.strip().startswith("add") and "NO_IR_DIFF" in line for line in out.splitlines())


def test_a_way_the_probe_could_not_ask_is_logged_with_its_reason(tmp_path, caplog):
    # A switch read only through the cache key would show as unread: the log says why.
    from zl_flaggems.host.switch_probe import ask_triton

    answer = {"python": "x", "version": "3.6.0", "how": {"DISABLE_MMA_V3": []}, "known": [],
              "cache_key_error": "AttributeError: no get_cache_invalidating_env_vars"}
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho 'ZL_SWITCH_PROBE {json.dumps(answer)}'\n")
    python.chmod(0o755)
    with caplog.at_level("WARNING", logger="zl_flaggems.host.switch_probe"):
        report = ask_triton(str(python), ["DISABLE_MMA_V3"], {}, {"DISABLE_MMA_V3": "1"})
    assert report.unread == ("DISABLE_MMA_V3",) and report.error == ""
    assert [r.getMessage() for r in caplog.records] == [
        (f"switch check: the compile-cache key variables could not be asked of triton 3.6.0 in "
         f"{python} (AttributeError: no get_cache_invalidating_env_vars)")]
