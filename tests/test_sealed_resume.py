"""A frozen A/B campaign killed outright (the device machine taken away: SIGKILL, no
handler runs) resumes with ``zl ab --resume`` alone: the frozen preconditions are checked
again, no finished cell or check runs twice, and it ends sealed, with its classes and
receipts, as an uninterrupted one does. Real zl processes over the fake 4-GPU host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_lanes_processes import LAUNCHER, fake_env, ledger, wait_for
from test_seal_classes import MANIFEST
from zl_core.seal import receipts

OPS = ("gconv", "wrongconv", "abs")
EXPECTED = {"gconv": "G", "wrongconv": "K", "abs": "B"}


def zl(tmp_path: Path, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.05", ZL_FAKE_OPS=" ".join(OPS), **env)
    return subprocess.run([sys.executable, str(LAUNCHER), *args], env=env, capture_output=True,
                          text=True, check=False, timeout=timeout)


def started(tmp_path: Path) -> list[tuple[str, str]]:
    """(op, side) of every round or control cell the fake host saw start, in order."""
    return [(row[2], row[3]) for row in ledger(tmp_path) if row[0] == "start"]


def killed_campaign(tmp_path: Path) -> Path:
    """A frozen campaign of OPS killed (SIGKILL) once gconv is done, its checks included,
    and wrongconv has finished a cell."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(MANIFEST + "".join(f"  - op: {op}\n" for op in OPS))
    frozen = tmp_path / "frozen"
    done = zl(tmp_path, "freeze", str(manifest), "--out", str(frozen))
    assert done.returncode == 0, done.stdout + done.stderr
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.2", ZL_FAKE_OPS=" ".join(OPS))
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "ab", "--manifest", str(frozen),
                             "--telemetry-interval", "0"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # A cell starts after the one before it ended: wrongconv's second start means its first is done.
    assert wait_for(lambda: sum(op == "wrongconv" for op, _ in started(tmp_path)) >= 2, timeout=120), \
        proc.communicate(timeout=5)
    proc.kill()
    proc.wait()
    [campaign] = sorted((tmp_path / "runs").glob("ab_*"))
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "running"
    assert not (campaign / "classes.json").exists()
    assert all((campaign / "gconv" / "check" / side / "accuracy.xml").is_file() for side in "AB")
    return campaign


def finished_cells(campaign: Path, op: str) -> int:
    return sum("finished" in json.loads(p.read_text())
               for p in campaign.glob(f"{op}/r0*/*/run_identity.json"))


def sealed_as_planned(campaign: Path) -> None:
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    classes = json.loads((campaign / "classes.json").read_text())
    assert {c["op"]: c["class"] for c in classes["classes"]} == EXPECTED
    assert receipts.check(campaign) == []
    assert {"gconv/check/A", "wrongconv/check/B", "abs/r01/C"} <= set(
        json.loads((campaign / "receipt.json").read_text())["cells"])


@pytest.mark.slow
def test_a_killed_frozen_campaign_resumes_to_a_sealed_end(tmp_path):
    campaign = killed_campaign(tmp_path)
    kept = finished_cells(campaign, "wrongconv")
    assert kept >= 1
    before = len(started(tmp_path))
    resumed = zl(tmp_path, "ab", "--resume", str(campaign), "--telemetry-interval", "0")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "gconv check A: finished before, kept" in resumed.stdout + resumed.stderr
    # Nothing of gconv ran again (rounds, control, checks), nor a finished cell of wrongconv;
    # the cell the kill cut short ran again.
    again = started(tmp_path)[before:]
    assert not [cell for cell in again if cell[0] == "gconv"]
    assert sum(op == "wrongconv" for op, _ in again) == 2 * 4 + 1 - kept  # four rounds and the control
    assert not list(campaign.glob(".aside/*-moved"))
    sealed_as_planned(campaign)


@pytest.mark.slow
def test_a_frozen_campaign_resumed_on_another_card_runs_its_unfinished_operator_whole_there(tmp_path):
    # Another machine with the same host name and device index (a rented card's image):
    # only the card's UUID tells. An operator's cells are compared with each other, so
    # wrongconv's finished cell is set aside and the operator runs again whole; gconv,
    # finished, is kept as it is.
    campaign = killed_campaign(tmp_path)
    before = len(started(tmp_path))
    env_machine = {"FAKE_SMI_MACHINE": "0001"}
    resumed = zl(tmp_path, "ab", "--resume", str(campaign), "--telemetry-interval", "0", **env_machine)
    said = resumed.stdout + resumed.stderr
    assert resumed.returncode == 0, said
    assert "wrongconv: its finished cells ran on card GPU-00000000-fake-4dev-0000-" in said
    again = started(tmp_path)[before:]
    assert not [cell for cell in again if cell[0] == "gconv"]
    assert sum(op == "wrongconv" for op, _ in again) == 2 * 4 + 1  # four rounds and the control
    moved = list(campaign.glob(".aside/*-moved/wrongconv/r01/*/run_identity.json"))
    assert moved
    uuids = {json.loads(p.read_text())["device_uuid"]
             for p in campaign.glob("wrongconv/r0*/*/run_identity.json")}
    assert uuids == {"GPU-00000000-fake-4dev-0001-000000000000"}
    sealed_as_planned(campaign)
