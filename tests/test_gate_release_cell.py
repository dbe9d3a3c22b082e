"""A FlagGems cell under ``zl ab --gate-release tests``: the phases plugin gives the device's
timing gate back when the session ends, once the device is idle, and keeps it to the exit
when the device cannot be made idle. Real cells on the fake checkout, and the plugin's
own steps in a process of their own against a stand-in torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("triton")
fake_flaggems = pytest.importorskip("fake_flaggems")

NODE = "benchmark/test_fake.py::test_fakeadd"


def gate_of(cell) -> dict:
    return json.loads((cell / "run_identity.json").read_text())["cell_phases"]["timing_gate"]


@pytest.mark.parametrize("release", ["tests", "exit"])
def test_the_cell_gives_the_gate_back_as_asked(tmp_path, release):
    fg = fake_flaggems.build(tmp_path / "FlagGems")
    cell = tmp_path / "cell"
    proc = fake_flaggems.run_cell(fg, cell, NODE, extra_env={"ZL_TIMING_GATE": str(tmp_path / "gate"),
                                                            "ZL_GATE_RELEASE": release})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    gate = gate_of(cell)
    (taken, given), = gate["held"]
    record = json.loads((cell / "run_identity.json").read_text())["cell_phases"]
    for start, end in record["device_busy"]["intervals"]:  # every timing inside the hold
        assert taken <= start < end <= given
    if release == "tests":
        # Given back at the session's end, before the teardown's last record.
        assert gate["open"] is False and given < record["written"]
    else:
        assert gate["open"] is True  # held until the process exits


PROBE = r'''
import os, sys, types, fcntl
calls = []
def sync():
    calls.append("synchronize")
    if os.environ.get("PROBE_FAIL"):
        raise RuntimeError("device lost")
torch = types.ModuleType("torch")
torch.fakedev = types.SimpleNamespace(synchronize=sync, empty_cache=lambda: calls.append("empty_cache"))
sys.modules["torch"] = torch
from zl_core import Backend
from zl_flaggems.cell import cellenv, phase_clock
from zl_flaggems.cell.plugins import phases as plugin
cellenv._backend_cache = Backend(name="fakedev", torch_namespace="fakedev")
phase_clock.CLOCK.hold_device()
plugin._release_gate()
import subprocess
# Another process's view, while this one lives on: can it take the gate now?
free = subprocess.run([sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
                       "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", os.environ["ZL_TIMING_GATE"]],
                      capture_output=True).returncode == 0
print(",".join(calls), phase_clock.CLOCK.gate.holding, free)
'''


def probe(tmp_path, **env) -> tuple[list[str], bool, bool, str]:
    cell = tmp_path / "cell"
    cell.mkdir()
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
                          env={**os.environ, "ZL_TIMING_GATE": str(tmp_path / "gate"),
                               "ZL_GATE_RELEASE": "tests", "ZL_CELL_DIR": str(cell), **env})
    calls, holding, free = done.stdout.splitlines()[-1].split()  # after any notes it printed
    return calls.split(","), holding == "True", free == "True", done.stdout + done.stderr


def test_the_device_is_made_idle_before_the_gate_opens(tmp_path):
    calls, holding, free, _ = probe(tmp_path)
    assert calls == ["synchronize", "empty_cache"] and not holding and free


def test_a_device_that_cannot_be_made_idle_keeps_the_gate_to_the_exit(tmp_path):
    calls, holding, free, out = probe(tmp_path, PROBE_FAIL="1")
    assert calls == ["synchronize"] and holding and not free
    said = [line for line in out.splitlines() if "kept the timing gate until the exit" in line]
    assert len(said) == 1 and "the device could not be made idle" in said[0] and "device lost" in said[0], out
