"""The design card's commands: nox sessions forward everything after `--` to zl,
in the user's interpreter (never an isolated virtualenv)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("nox")


def nox(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, ZL_PYTHON=sys.executable, ZL_RUNS_ROOT=str(cwd / "runs"))
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_sessions_are_listed_with_descriptions(tmp_path):
    out = nox("-l", cwd=tmp_path).stdout
    for name in ("screen", "ab", "report", "tests"):
        line = next(ln for ln in out.splitlines() if ln.lstrip("*- ").startswith(name + " "))
        assert "->" in line  # nox prints "name -> docstring"


def test_screen_forwards_arguments_in_the_users_interpreter(tmp_path):
    proc = nox("-s", "screen", "--", "--ops", "soft;max", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2  # zl's own code, not nox's blanket 1
    assert f"{sys.executable} -m zl_core screen --ops" in out  # nox shell-quotes the echo
    assert "malformed op name 'soft;max'" in out
    assert not (tmp_path / "runs").exists()


def test_a_zl_python_that_is_no_interpreter_is_one_line_and_exit_2(tmp_path):
    env = dict(os.environ, ZL_PYTHON=str(tmp_path / "gone" / "python"), ZL_RUNS_ROOT=str(tmp_path / "runs"))
    proc = subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", "screen"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (f"nox -s screen: $ZL_PYTHON ({tmp_path / 'gone' / 'python'}) is not an executable interpreter; "
            "point ZL_PYTHON at the python that holds your torch/triton, or unset it") in proc.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_ir_only_screen_runs_end_to_end_through_nox(tmp_path):
    pytest.importorskip("triton")
    proc = nox("-s", "screen", "--", "--ops", "mm", "add", "--switch", "DISABLE_MMA_V3",
               "--compile-only", "--backend", "cuda", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert any("mm" in ln and "IR_CHANGED" in ln for ln in out.splitlines())
    assert any(ln.strip().startswith("add") and "NO_IR_DIFF" in ln for ln in out.splitlines())
    report = nox("-s", "report", "--", str(next((tmp_path / "runs").glob("screen_*"))), "--json",
                 cwd=tmp_path)
    assert report.returncode == 0, report.stdout + report.stderr
    assert '"kind": "screen"' in report.stdout


def test_sessions_exit_with_zls_own_code(tmp_path):
    (tmp_path / "FlagGems").write_text("a file, not a checkout")
    proc = nox("-s", "screen", "--", "--ops", "topk", "--flaggems-dir", str(tmp_path / "FlagGems"),
               "--backend", "cuda", "--device", "0", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # PREFLIGHT_FAILED, as docs/exit-codes.md says
    assert "PREFLIGHT_FAILED check=flaggems_dir" in proc.stdout + proc.stderr
    report = nox("-s", "report", "--", str(tmp_path / "nothing-here"), cwd=tmp_path)
    assert report.returncode == 2


def _zl_probe() -> tuple[str, tuple[str, ...]]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("zl_noxfile", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._ZL_PROBE, module.PACKAGES


def test_the_install_probe_refuses_an_entry_point_that_no_longer_loads(tmp_path):
    # An editable install made before a module moved names the old module: the campaign
    # sessions must reinstall then, not run a zl whose provider is gone.
    probe, packages = _zl_probe()

    def run(env):
        return subprocess.run([sys.executable, "-c", probe, *packages], env=env,
                              capture_output=True, text=True, timeout=120, check=False)

    assert run(dict(os.environ)).returncode == 0
    stale = tmp_path / "zl_flaggems-0.0.1.dist-info"
    stale.mkdir()
    (stale / "METADATA").write_text("Metadata-Version: 2.1\nName: zl-flaggems\nVersion: 0.0.1\n")
    (stale / "entry_points.txt").write_text("[zl]\nflaggems = zl_flaggems.hooks\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = run(env)
    assert proc.returncode != 0 and "zl_flaggems.hooks" in proc.stderr
