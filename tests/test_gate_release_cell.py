"""A FlagGems cell under ``zl ab --gate-release tests``: the phases plugin gives the device's
timing gate back when the session ends, once the device is idle, and keeps it to the exit
when the device cannot be made idle. Real cells on the fake checkout, and the plugin's
own steps in a process of their own against a stand-in torch."""

from __future__ import annotations

import itertools
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


@pytest.mark.slow
def test_a_pipelined_flaggems_campaign_times_in_order_and_keeps_a_gate_it_cannot_idle(tmp_path,
                                                                                   monkeypatch):
    """zl ab through the CLI with the real FlagGems provider and real pytest cells on the fake
    checkout: one operator's cells start early and take the gate in their planned order;
    asked to give it back after their tests, on a backend that names no torch device
    interface to synchronise (the fake GPU's), each keeps it to its exit and says why; the
    report judges them as one caliber."""
    from zl_core.cli import main

    checkout = fake_flaggems.on_fake_gpu(fake_flaggems.build(tmp_path / "FlagGems"), monkeypatch)
    assert main(["ab", "--source", str(checkout), "--backend", "fakegpu", "--ops", "fakeadd:fake",
                 "--rounds", "4", "--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--force-switch",
                 "--allow-no-ir-diff", "--telemetry-interval", "0", "--runs-root", str(tmp_path / "runs"),
                 "--pipeline", "2", "--gate-release", "tests", "--timing", "operator"]) == 0
    campaign = next((tmp_path / "runs").glob("ab_*"))
    holds = []
    for cell in sorted((campaign / "fakeadd").glob("r*/[AB]")):
        identity = json.loads((cell / "run_identity.json").read_text())
        assert identity["gate_release"] == "tests" and identity["pipeline"] == 2
        gate = identity["phases"]["timing_gate"]
        (taken, given), = gate["held"]
        assert gate["until_exit"]  # kept: the device could not be made idle
        said = (cell / "run.log").read_text()
        assert "kept the timing gate until the exit: backend fakegpu names no torch device" in said
        holds.append((taken, given, f"{cell.parent.name}/{cell.name}"))
    holds.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(holds))  # one at a time
    assert [who for *_, who in holds] == ["r01/A", "r01/B", "r02/B", "r02/A", "r03/B", "r03/A",
                                          "r04/A", "r04/B"]
    model = json.loads((campaign / "report.json").read_text())
    assert model["caliber_problems"] == [] and model["caliber"]["common"]["gate_release"] == "tests"
    assert not list(campaign.rglob(".zl_turns")) and not list(campaign.rglob(".zl_gate_taken"))
