"""Device locks, guarded cells and signals with real processes (tests/fake_lanes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from zl_core.cells import devicelock
from zl_core.plugins.host import PluginHost

FAKES = Path(__file__).with_name("fake_lanes")
LAUNCHER = FAKES / "zl_fake_lanes.py"


def fake_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update({"PATH": f"{FAKES / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                "ZL_FAKE_LEDGER": str(tmp_path / "ledger.tsv"), "ZL_RUNS_ROOT": str(tmp_path / "runs"),
                "ZL_BACKEND": "cuda", "FLAGGEMS_DIR": ""})
    env.update(extra)
    return env


def ledger(tmp_path: Path) -> list[list[str]]:
    path = tmp_path / "ledger.tsv"
    if not path.is_file():
        return []
    return [line.split("\t") for line in path.read_text().splitlines()]


def wait_for(condition, timeout=20.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; it only waits for its reaper.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def start_cell_under_zl_run(tmp_path: Path, device: str, sleep: str = "60") -> subprocess.Popen:
    env = fake_env(tmp_path, ZL_FAKE_SLEEP=sleep)
    return subprocess.Popen([sys.executable, str(LAUNCHER), "run", "--suite", "sleepy", "--op", "hold",
                             "--device", device, "--quiet", "--out", str(tmp_path / "cell")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_held_device_is_busy_for_another_lock(tmp_path):
    first = devicelock.DeviceLock("cuda", "3")
    assert first.try_acquire()
    try:
        second = devicelock.DeviceLock("cuda", "3")
        assert not second.try_acquire()
        assert not second.acquire(timeout_s=0.3)
        assert f"held by pid {os.getpid()}" in second.holder()
        assert devicelock.DeviceLock("cuda", "4").try_acquire()  # other devices are free
    finally:
        first.release()
    assert devicelock.DeviceLock("cuda", "3").try_acquire()


def test_a_cell_that_inherited_the_lock_keeps_its_device_after_we_let_go(tmp_path):
    lock = devicelock.DeviceLock("cuda", "1")
    assert lock.try_acquire()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], pass_fds=(lock.fd,))
    try:
        lock.release()
        assert not devicelock.DeviceLock("cuda", "1").try_acquire()
        child.kill()
        child.wait()
        assert wait_for(lambda: devicelock.DeviceLock("cuda", "1").try_acquire(), timeout=5)
    finally:
        child.kill()


def test_devices_under_a_visibility_mask_are_physical_ids(monkeypatch):
    import zl_backend_cuda.plugin as cuda_plugin

    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0")
    cuda = host.get_backend("cuda")
    monkeypatch.setenv("PATH", f"{FAKES / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert host.enumerate_devices(cuda) == ["0", "1", "2", "3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2, 3")
    assert host.enumerate_devices(cuda) == ["2", "3"]
    env = host.apply_visibility(cuda, {"CUDA_VISIBLE_DEVICES": "2,3"}, "3")
    assert env["CUDA_VISIBLE_DEVICES"] == "3"


def test_a_cell_pinned_under_a_mask_runs_on_its_physical_device(tmp_path):
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0", CUDA_VISIBLE_DEVICES="2,3")
    proc = subprocess.run([sys.executable, str(LAUNCHER), "run", "--suite", "sleepy", "--op", "abs",
                           "--device", "3", "--quiet", "--out", str(tmp_path / "cell")],
                          check=False, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    starts = [row for row in ledger(tmp_path) if row[0] == "start"]
    assert [row[1] for row in starts] == ["3"]


def test_no_cell_survives_a_sigkilled_orchestrator(tmp_path):
    orchestrator = start_cell_under_zl_run(tmp_path, "2")
    started = wait_for(lambda: [r for r in ledger(tmp_path) if r[0] == "start"])
    assert started, orchestrator.communicate(timeout=5)
    cell_pid = int(started[0][4])
    assert not devicelock.DeviceLock("cuda", "2").try_acquire()  # the cell holds device 2
    orchestrator.kill()
    orchestrator.wait()
    assert wait_for(lambda: not alive(cell_pid), timeout=5), "the cell outlived its orchestrator"
    assert wait_for(lambda: devicelock.DeviceLock("cuda", "2").try_acquire(), timeout=5)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                           (signal.SIGHUP, 129)])
def test_a_signal_kills_the_running_cell_and_exits_128_plus_its_number(tmp_path, sig, code):
    orchestrator = start_cell_under_zl_run(tmp_path, "1")
    started = wait_for(lambda: [r for r in ledger(tmp_path) if r[0] == "start"])
    assert started, orchestrator.communicate(timeout=5)
    cell_pid = int(started[0][4])
    orchestrator.send_signal(sig)
    _, err = orchestrator.communicate(timeout=20)
    assert orchestrator.returncode == code
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signal.Signals(sig).name}" in lines[0]
    assert wait_for(lambda: not alive(cell_pid), timeout=5)
    identity = (tmp_path / "cell" / "run_identity.json").read_text()
    assert '"finished"' not in identity  # an interrupted cell never counts as finished


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_an_operators_next_cell_waits_its_turn_loses_nothing(tmp_path, sig):
    """zl ab --pipeline 2 of one operator: a signal while a cell times and the operator's
    next cell, started early, waits for its turn. Both end, zl exits 128 + the signal, and
    a resume finishes the campaign with every cell once and the holds in planned order."""
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="1.5")
    argv = [sys.executable, str(LAUNCHER), "ab", "--suite", "sleepy", "--ops", "abs", "--rounds", "4",
            "--switch", "FAKE_SWITCH", "--allow-no-ir-diff", "--telemetry-interval", "0", "--pipeline", "2"]
    orchestrator = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
    # Round 1's second cell holds the gate; round 2's first started early beside it.
    started = wait_for(lambda: [r for r in ledger(tmp_path) if r[0] == "start"][2:] or None, timeout=60)
    assert started, orchestrator.communicate(timeout=5)
    pids = [int(r[4]) for r in ledger(tmp_path) if r[0] == "start"]
    assert all(alive(pid) for pid in pids[-2:])  # the timing cell and the one waiting its turn
    orchestrator.send_signal(sig)
    _, err = orchestrator.communicate(timeout=30)
    assert orchestrator.returncode == 128 + sig, err
    assert "Traceback" not in err
    assert wait_for(lambda: not any(alive(pid) for pid in pids), timeout=10)
    [campaign] = (tmp_path / "runs").glob("ab_*")
    resumed = subprocess.run([sys.executable, str(LAUNCHER), "ab", "--resume", str(campaign)], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    holds = []
    for ident in campaign.glob("abs/r*/[AB]/run_identity.json"):
        gate = json.loads(ident.read_text())["phases"]["timing_gate"]
        holds += [(start, end, f"{ident.parent.parent.name}/{ident.parent.name}") for start, end in gate["held"]]
    holds.sort()
    assert [who for *_, who in holds] == ["r01/A", "r01/B", "r02/B", "r02/A", "r03/B", "r03/A",
                                          "r04/A", "r04/B"]
    rows = (campaign / "status.tsv").read_text().splitlines()[1:]
    assert len({tuple(r.split("\t")[1:4]) for r in rows}) == 8
    assert not list(campaign.rglob(".zl_turns")) and not list(campaign.rglob(".zl_gate_taken"))
