"""Fault injection: a lanes screen of eight operators on the fake 4-GPU host, hit by one
fault at a seeded random moment (two draws of each), then resumed (at most three times)
to completion.

Faults: the orchestrator SIGKILLed or SIGTERMed, a running cell SIGKILLed, status.tsv cut
mid-line, a stale lock file left by a dead process. After each, every cell finished before
the fault must be there unchanged (its results.json byte for byte, its identity's finish
stamp), every operator must end with both sides finished, the campaign complete and
`zl report` exit 0. The figures (faults injected, survived, results lost or changed) are
printed (`-s`)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_lanes_processes import LAUNCHER, alive, fake_env, ledger, wait_for

OPS = ["abs", "add", "mul", "sub", "exp", "log", "sin", "cos"]
FAULTS = ["orchestrator SIGKILL", "orchestrator SIGTERM", "cell SIGKILL", "status.tsv cut",
          "stale lock file"]
SEED = 20261204
TALLY = {"injected": 0, "survived": 0, "lost": 0, "changed": 0}


def zl(tmp_path: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LAUNCHER), *argv], env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.3"),
                          capture_output=True, text=True, check=False, timeout=timeout)


def finished_cells(campaign: Path) -> dict[str, tuple[str, str]]:
    """cell -> (sha256 of results.json, finish stamp) of every finished cell."""
    out = {}
    for ident_path in campaign.glob("*/[AB]/run_identity.json"):
        ident = json.loads(ident_path.read_text())
        results = ident_path.with_name("results.json")
        if ident.get("finished") and not ident.get("interrupted") and results.is_file():
            out[str(ident_path.parent.relative_to(campaign))] = (
                hashlib.sha256(results.read_bytes()).hexdigest(), ident["finished"])
    return out


def inject(fault: str, proc: subprocess.Popen, tmp_path: Path, campaign: Path, rng: random.Random) -> None:
    if fault == "orchestrator SIGKILL":
        proc.kill()
    elif fault == "orchestrator SIGTERM":
        proc.send_signal(signal.SIGTERM)
    elif fault == "cell SIGKILL":
        running = [int(r[4]) for r in ledger(tmp_path) if r[0] == "start" and alive(int(r[4]))]
        if running:
            os.kill(rng.choice(running), signal.SIGKILL)
        return  # the campaign goes on: the killed cell is retried as a crash
    elif fault == "status.tsv cut":
        proc.kill()
        status = campaign / "status.tsv"
        text = status.read_text()
        status.write_text(text[: len(text) - rng.randint(1, 20)])  # its last row cut mid-line
    elif fault == "stale lock file":
        proc.kill()
        proc.wait()
        lock_dir = Path(os.environ["ZL_LOCK_DIR"])  # each test's own (tests/conftest.py)
        lock_dir.mkdir(parents=True, exist_ok=True)
        (lock_dir / "cuda-0.lock").write_text("999999\n")  # a pid long gone, no flock held


@pytest.mark.parametrize("draw", [0, 1])
@pytest.mark.parametrize("fault", FAULTS)
def test_a_campaign_survives_each_fault_and_loses_no_finished_result(tmp_path, fault, draw):
    rng = random.Random(f"{SEED}-{fault}-{draw}")
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                             "FAKE_SWITCH", "--ops", *OPS, "--devices", "all"],
                            env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.3"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wanted = rng.randint(2, 10)  # finished cells before the fault
    assert wait_for(lambda: sum(1 for r in ledger(tmp_path) if r[0] == "end") >= wanted, timeout=60)
    (campaign,) = (tmp_path / "runs").glob("screen_*")
    before = finished_cells(campaign)
    assert before  # something to lose
    TALLY["injected"] += 1
    inject(fault, proc, tmp_path, campaign, rng)
    proc.communicate(timeout=60)
    for _ in range(3):
        state = json.loads((campaign / "campaign.json").read_text())["state"]
        if state == "complete":
            break
        resumed = zl(tmp_path, "screen", "--resume", str(campaign), "--devices", "all")
        assert resumed.returncode in (0, 6), resumed.stdout + resumed.stderr
    after = finished_cells(campaign)
    lost = [cell for cell in before if cell not in after]
    changed = [cell for cell in before if cell in after and after[cell] != before[cell]]
    TALLY["lost"] += len(lost)
    TALLY["changed"] += len(changed)
    assert lost == [] and changed == []
    assert {f"{op}/{side}" for op in OPS for side in "AB"} <= set(after)
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    report = zl(tmp_path, "report", str(campaign))
    assert report.returncode == 0, report.stdout + report.stderr
    assert wait_for(lambda: not any(alive(int(r[4])) for r in ledger(tmp_path) if r[0] == "start"),
                    timeout=10)  # nothing of the campaign runs on
    TALLY["survived"] += 1


def figures() -> str:
    """The line tests/conftest.py prints at the end of the run."""
    return (f"fault injection: {TALLY['injected']} faults injected, {TALLY['survived']} survived, "
            f"{TALLY['lost']} finished results lost, {TALLY['changed']} changed")
