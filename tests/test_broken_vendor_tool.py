"""A vendor tool that is installed but failing means a device machine zl cannot see, not a
machine without devices: the campaign names the tool and its failure and runs nothing,
instead of turning silently into an IR-only screen. Through the CLI, with the real
backend plugins and a fake nvidia-smi on PATH."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys

import zl_backend_cuda.plugin as cuda_plugin
from fake_tools import write_tool
from test_lanes_processes import alive, wait_for
from zl_core.app import resolve
from zl_core.cli import main

DRIVER_GONE = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
               "Make sure that the latest NVIDIA driver is installed and running.\n")



def screen(tmp_path) -> int:
    try:
        return main(["screen", "--suite", "builtin", "--switch", "DISABLE_MMA_V3", "--ops", "add",
                     "--runs-root", str(tmp_path / "runs")])
    except SystemExit as exc:
        return int(exc.code)


def test_an_nvidia_smi_that_cannot_reach_the_driver_stops_the_screen(machine, tmp_path, capsys):
    write_tool(machine, "nvidia-smi", stderr=DRIVER_GONE, rc=9)
    assert screen(tmp_path) == 2
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in out + err, err
    assert "cuda: nvidia-smi exited 9: NVIDIA-SMI has failed because it couldn't communicate" in lines[0]
    assert "IR-only" not in out and "--compile-only" in lines[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_hung_nvidia_smi_is_named_and_ended_and_waited_for_once(machine, tmp_path, capsys, monkeypatch):
    """The backend's probes and the check of why none answered all ask the same hung tool:
    it is started once, and the one timeout it ran past is the answer for the rest."""
    monkeypatch.setattr(resolve, "TOOL_CHECK_S", 1.0)
    monkeypatch.setattr(cuda_plugin, "TOOL_TIMEOUT_S", 1.0)
    starts = tmp_path / "starts"
    tool = machine / "nvidia-smi"
    tool.write_text(f"#!{sys.executable}\nimport time\nopen({str(starts)!r}, 'a').write('x')\n"
                    "time.sleep(60)\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    assert screen(tmp_path) == 2
    err = capsys.readouterr().err
    assert "cuda: nvidia-smi did not answer within 1s" in err
    assert starts.read_text() == "x"


def test_without_any_vendor_tool_the_screen_says_it_runs_ir_only(machine, tmp_path, capsys):
    assert screen(tmp_path) == 0
    err = capsys.readouterr().err
    assert "running the IR-only screen instead" in err  # said (a warning), not silent


def test_ctrl_c_while_a_hung_nvidia_smi_is_waited_for_leaves_nothing_of_it_running(machine, tmp_path):
    """The tool is asked from a plugin call's worker thread, which Ctrl-C never reaches: it
    runs in a session zl's interrupt handling kills, so nothing of it outlives the command."""
    pids = tmp_path / "pids"
    tool = machine / "nvidia-smi"
    # A shell that leaves a child behind, as a wrapper script around the real tool would.
    tool.write_text(f"#!/bin/sh\necho $$ >> {pids}\nsleep 60 &\necho $! >> {pids}\nwait\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    proc = subprocess.Popen([sys.executable, "-m", "zl_core", "screen", "--suite", "builtin", "--switch",
                             "DISABLE_MMA_V3", "--ops", "add", "--runs-root", str(tmp_path / "runs")],
                            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: pids.is_file() and len(pids.read_text().split()) == 2, timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted by SIGINT" in err and "Traceback" not in err
    started = [int(pid) for pid in pids.read_text().split()]
    assert wait_for(lambda: not any(alive(pid) for pid in started), timeout=10)
