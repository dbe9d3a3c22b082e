"""``--replay-root SCREEN``: a screen or an A/B campaign whose every cell replays the
configs an earlier screen's side A recorded (through the CLI, with the fake suite's real
cell processes, tests/fake_cell.py, which report a replay that misses a key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from zl_core.cli import main
from zl_core.interface import caliber


@pytest.fixture
def screened(fake_host, tmp_path, capsys) -> Path:
    """A finished screen of gemm under tmp_path/runs: the configs to replay."""
    assert main(["screen", "--ops", "gemm", "--suite", "fake", "--runs-root", str(tmp_path / "runs")]) == 0
    capsys.readouterr()
    return next((tmp_path / "runs").glob("screen_*"))


def _campaigns(root: Path, kind: str) -> list[Path]:
    return sorted(root.glob(f"{kind}_*"))


def test_a_screen_replays_the_earlier_screens_record_on_both_sides(screened, tmp_path, capsys):
    again = tmp_path / "again"
    assert main(["screen", "--ops", "gemm", "--suite", "fake", "--runs-root", str(again),
                 "--replay-root", str(screened)]) == 0
    assert "every cell replays the autotune configs side A of screen" in capsys.readouterr().err
    campaign = _campaigns(again, "screen")[0]
    record = str((screened / "gemm" / "A").resolve())
    for side in "AB":
        identity = caliber.read_identity(campaign / "gemm" / side)
        assert (identity["autotune_mode"], identity["replay_source"]) == ("replay", record)
        assert not (campaign / "gemm" / side / "autotune_records").exists()  # nothing recorded
        assert "AUTOTUNE_REPLAY_FALLBACK" not in (campaign / "gemm" / side / "run.log").read_text()
    # Recorded for a resume, as an absolute path.
    options = json.loads((campaign / "campaign.json").read_text())["options"]
    assert options["measure"]["replay_root"] == str(screened.resolve())


def test_ab_rounds_replay_it_in_every_round(screened, tmp_path, capsys):
    root = tmp_path / "ab"
    assert main(["ab", "--ops", "gemm", "--rounds", "4", "--suite", "fake", "--runs-root", str(root),
                 "--telemetry-interval", "0", "--replay-root", str(screened)]) == 0
    campaign = _campaigns(root, "ab")[0]
    record = str((screened / "gemm" / "A").resolve())
    modes = {(caliber.read_identity(cell)["autotune_mode"], caliber.read_identity(cell)["replay_source"])
             for cell in campaign.glob("gemm/r*/[AB]")}
    assert len(list(campaign.glob("gemm/r*/[AB]"))) == 8
    assert modes == {("replay", record)}  # round 1's A replays too


@pytest.mark.parametrize("case, needle", [
    ("missing", "--replay-root {path}: no such folder; name a screen campaign"),
    ("ab", "is an ab campaign; the configs to replay are recorded by a screen's side A"),
    ("not_recorded", "has no finished recording side A for pointwise; re-measure only operators"),
    ("no_campaign", "is no campaign (it has no campaign.json)"),
])
def test_bad_replay_roots_are_refused_before_anything_runs(case, needle, screened, tmp_path, capsys):
    path, ops = screened, ["gemm"]
    if case == "missing":
        path = tmp_path / "nowhere"
    elif case == "ab":
        assert main(["ab", "--ops", "gemm", "--rounds", "4", "--suite", "fake", "--runs-root",
                     str(tmp_path / "abs"), "--telemetry-interval", "0"]) == 0
        path = _campaigns(tmp_path / "abs", "ab")[0]
    elif case == "not_recorded":
        ops = ["gemm", "pointwise"]
    elif case == "no_campaign":
        path = screened / "gemm"
    capsys.readouterr()
    root = tmp_path / "fresh"
    assert main(["screen", "--ops", *ops, "--suite", "fake", "--runs-root", str(root),
                 "--replay-root", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle.format(path=path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not root.exists() or not any(root.iterdir())  # nothing written

