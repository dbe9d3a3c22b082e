"""Warm starts: cells forked from a zygote that imported the provider's modules once.

Real processes throughout: the zygote (``python -m zl_core.cells.zygote``), the cell guard, the
forked cells (tests/fake_cell.py, and the built-in suite's compile-only cells with real
Triton), killed the ways campaigns end.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest
from own_processes import holding
from test_campaign_engine import engine_parts, fake_spec, settings
from zl_core.app.seal import finish_campaign
from zl_core.campaigns.screen_campaign import run_screen
from zl_core.cells import cellguard, warmstart
from zl_core.cells.cell import EXIT_STALLED, run_cell
from zl_core.cli import main
from zl_core.interface import caliber
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import WarmPlan


@pytest.fixture(autouse=True)
def fresh_zygotes():
    yield
    warmstart.close_all()  # each test's zygotes end with it (their environments differ)


def warm(timeout=60.0):
    return attrs.evolve(settings(timeout=timeout), start="warm")


def request(backend, settings_, out, op="gemm", env=None):
    return settings_.request(op=OpSpec.parse(op), backend=backend, device="0", out_dir=out,
                             env=env or {}, side="A", autotune_mode="record", replay_from=None)


def test_a_warm_cell_is_the_same_cell_forked_from_the_imports(fake_host, tmp_path):
    backend, provider, sides = engine_parts(fake_host)
    cold = run_cell(fake_host, provider, request(backend, settings(), tmp_path / "cold", env=sides.env("B")))
    hot = run_cell(fake_host, provider, request(backend, warm(), tmp_path / "warm", env=sides.env("B")))
    assert cold.ok and hot.ok and cold.success_rows == hot.success_rows == 2
    log = (hot.cell_dir / "run.log").read_text()
    assert "preloaded=True" in log and "switch=1" in log  # forked after decimal, with B's switch
    assert "preloaded=False" in (cold.cell_dir / "run.log").read_text()
    ident = caliber.read_identity(hot.cell_dir)
    assert ident["start"] == "warm" and ident["warm_modules"] == ["json", "decimal"]
    assert caliber.read_identity(cold.cell_dir)["start"] == "cold"
    assert (hot.cell_dir / "ttgir" / "64" / "gemm_kernel" / "default.ttgir").read_text() == \
        (cold.cell_dir / "ttgir" / "64" / "gemm_kernel" / "default.ttgir").read_text()
    assert ident["phases"]["complete"] is True


@pytest.mark.slow
def test_a_warm_cell_that_stalls_ends_stalled_with_its_stacks_and_its_children(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    settings_ = attrs.evolve(warm(timeout=120.0), stall_timeout_s=2.0)
    out = run_cell(fake_host, provider, request(backend, settings_, tmp_path / "cell", op="hang"))
    assert out.stalled and out.rc == EXIT_STALLED and out.elapsed_s < 120
    assert "fake_cell.py" in (out.cell_dir / "stacks.txt").read_text()
    assert caliber.read_identity(out.cell_dir)["start"] == "warm"
    time.sleep(0.5)
    assert holding(tmp_path) == []


@pytest.mark.parametrize("how", ["guard killed", "group terminated"])
def test_no_warm_cell_outlives_its_guard(tmp_path, how):
    script = tmp_path / "sleeper.py"
    script.write_text("import os, time\nprint('pid', os.getpid(), flush=True)\ntime.sleep(300)\n")
    zygote = warmstart.zygote_for(sys.executable, WarmPlan(modules=("json",)), dict(os.environ))
    guard = cellguard.spawn([sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ),
                            stdout=subprocess.PIPE, zygote=zygote.socket_path)
    pid = int(guard.stdout.readline().split()[1])
    if how == "guard killed":
        os.kill(guard.pid, signal.SIGKILL)  # no teardown: the cell sees its connection close
    else:
        os.killpg(guard.pid, signal.SIGTERM)
    guard.wait(timeout=10)
    guard.stdout.close()
    deadline = time.time() + 10
    while time.time() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid)
    assert zygote.alive()  # the zygote serves the next cell


def test_a_warm_cell_starts_with_the_parents_imports_frozen(tmp_path):
    # Out of the cell's garbage collections, and never copied by one after the fork.
    script = tmp_path / "frozen.py"
    script.write_text("import gc\nprint(gc.get_freeze_count(), flush=True)\n")
    zygote = warmstart.zygote_for(sys.executable, WarmPlan(modules=("json", "decimal")), dict(os.environ))
    guard = cellguard.spawn([sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ),
                            stdout=subprocess.PIPE, zygote=zygote.socket_path)
    inherited = int(guard.stdout.readline())
    guard.stdout.close()
    assert guard.wait(timeout=20) == 0
    # (a frozen object still goes when its last reference does: the zygote's own request)
    assert zygote.report["frozen_objects"] > 1000 and inherited >= 0.9 * zygote.report["frozen_objects"]


def test_a_zygote_told_to_end_lets_its_running_cell_finish_first(tmp_path):
    script = tmp_path / "short.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(1.5)\nprint('done')\n")
    zygote = warmstart.zygote_for(sys.executable, WarmPlan(modules=("json",)), dict(os.environ))
    guard = cellguard.spawn([sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ),
                            stdout=subprocess.PIPE, zygote=zygote.socket_path)
    assert guard.stdout.readline().strip() == b"started"
    process = zygote._proc
    zygote.close(wait=False)  # as the oldest of too many zygotes is ended
    assert guard.wait(timeout=20) == 0 and guard.stdout.read().strip() == b"done"
    guard.stdout.close()
    assert process.wait(timeout=10) == 0  # and then it ended


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # The zygote reaps its children; until then a finished one is a zombie.
    state = Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}").exists() else "Z"
    return state != "Z"


def test_a_module_that_starts_the_driver_is_left_out(tmp_path, monkeypatch):
    (tmp_path / "zl_test_starts_driver.py").write_text(
        "import sys, types\n"
        "torch = types.ModuleType('torch')  # what torch says once CUDA has started\n"
        "torch.cuda = types.SimpleNamespace(is_initialized=lambda: True, device_count=lambda: 1)\n"
        "sys.modules['torch'] = torch\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    plan = WarmPlan(modules=("json", "zl_test_starts_driver", "no_such_module_zl", "decimal"))
    zygote = warmstart.zygote_for(sys.executable, plan, dict(os.environ))
    assert zygote.imported == ("json", "decimal")
    note = warmstart.left_out(sys.executable, plan, dict(os.environ))
    assert "zl_test_starts_driver started the device driver (torch.cuda initialised)" in note
    assert "no_such_module_zl" in zygote.report["left_out"]


def test_torchs_cpu_namespace_never_keeps_torch_out_of_the_warm_parent(tmp_path, monkeypatch):
    # torch 2.11's torch.cpu counts one device and says it is initialised as soon as
    # torch imports; an H100's campaigns left torch to every cell because of it.
    (tmp_path / "zl_test_torch_cpu.py").write_text(
        "import sys, types\n"
        "torch = types.ModuleType('torch')  # what torch 2.11 says right after its import\n"
        "torch.cpu = types.SimpleNamespace(is_initialized=lambda: True, device_count=lambda: 1)\n"
        "torch.cuda = types.SimpleNamespace(is_initialized=lambda: False, device_count=lambda: 1)\n"
        "sys.modules['torch'] = torch\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    plan = WarmPlan(modules=("json", "zl_test_torch_cpu", "decimal"))
    zygote = warmstart.zygote_for(sys.executable, plan, dict(os.environ))
    assert zygote.imported == ("json", "zl_test_torch_cpu", "decimal")
    assert zygote.report["driver"] == "untouched"


def test_a_switch_read_at_import_makes_the_whole_campaign_cold(fake_host, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="zl_core")
    (tmp_path / "zl_test_reads_switch.py").write_text(
        "import os\nMMA = os.environ.get('FAKE_SWITCH', '0')  # read once, at import\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    _, provider, _ = engine_parts(fake_host)
    monkeypatch.setattr(type(provider), "warm_modules", ("zl_test_reads_switch",))
    root, _ = run_screen(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm"), OpSpec.parse("pointwise")],
                                              warm(), tmp_path / "runs"))
    said = " ".join(caplog.messages)
    assert "warm start off for this campaign" in said and "FAKE_SWITCH" in said
    starts = {caliber.read_identity(root / op / side)["start"] for op in ("gemm", "pointwise")
              for side in ("A", "B")}
    assert starts == {"cold"}
    assert json.loads((root / "campaign.json").read_text())["start"] == "cold"


def test_a_campaign_mixing_cold_and_warm_cells_is_refused(fake_host, tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO, logger="zl_core")
    root, _ = run_screen(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm")], warm(), tmp_path / "runs"))
    assert any(m.startswith("warm start: each cell forks from an interpreter that imported json, decimal")
               for m in caplog.messages)
    assert caliber.read_identity(root / "gemm" / "B")["start"] == "warm"
    finish_campaign(root)  # what zl screen does after the cells (receipts, then complete)
    assert main(["report", str(root)]) == 0
    caliber.merge_identity(root / "gemm" / "B", {"start": "cold"})  # as a cold rerun of B would leave it
    capsys.readouterr()
    assert main(["report", str(root)]) == 4
    err = capsys.readouterr().err
    assert "start" in err and "gemm A=warm" in err


def _ttgir(campaign: Path) -> dict[str, str]:
    return {str(p.relative_to(campaign)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(campaign.rglob("*.ttgir"))}


@pytest.mark.slow
def test_warm_and_cold_screens_of_the_builtin_suite_compile_the_same_ttgir(tmp_path):
    """Real Triton 3.6 for sm90, every cell a real process: the same verdicts, byte for byte
    the same TTGIR, cold against warm."""
    pytest.importorskip("triton")
    runs = {}
    for start in ("cold", "warm"):
        proc = subprocess.run([sys.executable, "-m", "zl_core", "screen", "--compile-only",
                               "--backend", "cuda", "--switch", "DISABLE_MMA_V3",
                               "--ops", "mm", "add", "softmax", "--start", start,
                               "--runs-root", str(tmp_path / start)],
                              capture_output=True, text=True, check=False, cwd=tmp_path,
                              env={k: v for k, v in os.environ.items() if k != "DISABLE_MMA_V3"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        if start == "warm":
            assert "warm start: each cell forks from an interpreter that imported triton" in proc.stderr
            if importlib.util.find_spec("torch") is None:  # named, not silently dropped
                assert "not importable here, left to the cells:" in proc.stderr and "torch" in proc.stderr
        (campaign,) = (tmp_path / start).glob("screen_*")
        rows = json.loads((campaign / "screen.json").read_text())["ops"]
        runs[start] = (campaign, {r["op"]: r["verdict"] for r in rows})
    (cold, cold_verdicts), (hot, warm_verdicts) = runs["cold"], runs["warm"]
    assert cold_verdicts == warm_verdicts == {"mm": "IR_CHANGED", "add": "NO_IR_DIFF",
                                              "softmax": "NO_IR_DIFF"}
    assert _ttgir(cold) == _ttgir(hot) and len(_ttgir(cold)) >= 6
    ident = caliber.read_identity(hot / "mm" / "B")
    assert ident["start"] == "warm" and "triton" in ident["warm_modules"]


def test_a_warm_cell_interrupted_by_ctrl_c_ends_as_a_cold_one_would(tmp_path):
    script = tmp_path / "ctrl_c.py"
    script.write_text("raise KeyboardInterrupt\n")
    cold = subprocess.run([sys.executable, str(script)], capture_output=True, check=False)
    zygote = warmstart.zygote_for(sys.executable, WarmPlan(modules=("json",)), dict(os.environ))
    guard = cellguard.spawn([sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ),
                            stdout=subprocess.PIPE, zygote=zygote.socket_path)
    out = guard.stdout.read()
    guard.stdout.close()
    assert guard.wait(timeout=20) == cold.returncode == -signal.SIGINT
    assert b"KeyboardInterrupt" in out
