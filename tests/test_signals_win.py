"""zl's own interrupt always wins over a plugin's isolation: a plugin that blocks while
zl imports it, or in one of its hooks, is ended with zl by SIGTERM or SIGINT (real
processes; the plugin is installed as an entry point would be, through a dist-info
folder on the path)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# A vendor plugin's retry loop, as they are written: it keeps trying through any Exception.
PLUGIN = '''
import os, time
from zl_core import hookimpl


def wait_for_the_driver():
    while True:
        try:
            time.sleep(0.5)
        except Exception:
            pass


if os.environ.get("HANG_AT") == "import":
    print("importing", flush=True)
    wait_for_the_driver()


@hookimpl
def zl_enumerate_devices(backend, explicit):
    if os.environ.get("HANG_AT") == "hook":
        print("in the hook", flush=True)
        wait_for_the_driver()
    return None
'''


def install_plugin(site: Path) -> None:
    (site / "zl_test_hanging_plugin.py").write_text(PLUGIN)
    info = site / "zl_test_hanging_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zl-test-hanging-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[zl]\nhanging = zl_test_hanging_plugin\n")


@pytest.mark.parametrize("hang_at", ["import", "hook"])
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_zl_while_a_plugin_blocks(tmp_path, hang_at, sig, code):
    install_plugin(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "HANG_AT": hang_at, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "zl_core", "screen", "--backend", "cuda", "--ops", "add",
                             "--switch", "DISABLE_MMA_V3", "--runs-root", str(tmp_path / "runs")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == ("importing" if hang_at == "import" else "in the hook")
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()  # a zl that survived its signal must not outlive the test
        proc.wait()
    assert time.monotonic() - sent < 10
    assert proc.returncode == code, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signal.Signals(sig).name}" in lines[0]
    assert "Traceback" not in out + err
