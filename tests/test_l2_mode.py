"""--l2 warm|flush: the L2 cache graph-timed calls find, from the command line (or a
configuration file) to every cell's environment and identity, and a caliber field that
refuses a comparison of warm with flushed cells (docs/caliber.md). What flushing does
to the timer itself: tests/test_flaggems_timing.py and tests/test_flaggems_cells.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def zl(lanes_main):
    return lanes_main


def campaigns(tmp_path: Path, kind: str) -> list[Path]:
    return sorted((tmp_path / "runs").glob(f"{kind}_*"))


def cells_of(campaign: Path) -> list[Path]:
    return sorted(p.parent for p in campaign.rglob("run_identity.json") if ".aside" not in p.parts)


def seen(cell: Path) -> tuple[str, str]:
    """(the identity's l2, the ZL_L2 the cell process printed)."""
    identity = json.loads((cell / "run_identity.json").read_text())
    printed = next(ln for ln in (cell / "run.log").read_text().splitlines() if ln.startswith("sleepy cell"))
    return identity["l2"], printed.rsplit(" l2=", 1)[1]


SCREEN = ["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs"]


def test_a_screen_passes_the_l2_mode_to_every_cell_and_a_report_refuses_mixing_it(zl, tmp_path, capsys):
    assert zl([*SCREEN]) == 0
    assert zl([*SCREEN, "--l2", "flush"]) == 0
    warm, flushed = campaigns(tmp_path, "screen")
    if seen(warm / "abs" / "A")[0] == "flush":  # same-second stamps sort either way
        warm, flushed = flushed, warm
    for campaign, mode in ((warm, "warm"), (flushed, "flush")):
        cells = cells_of(campaign)
        assert len(cells) == 2 and {seen(c) for c in cells} == {(mode, mode)}
    assert json.loads((flushed / "campaign.json").read_text())["options"]["measure"]["l2"] == "flush"
    capsys.readouterr()
    assert zl(["report", "--ab", str(warm / "abs" / "A"), str(flushed / "abs" / "B")]) == 4
    err = capsys.readouterr().err
    assert "caliber field 'l2' differs: A=warm B=flush" in err
    assert zl(["report", "--ab", str(flushed / "abs" / "A"), str(flushed / "abs" / "B")]) == 0


def test_ab_rounds_take_the_l2_mode_from_a_configuration_file(zl, tmp_path, monkeypatch):
    config = tmp_path / "zl.yaml"
    config.write_text("ab:\n  l2: flush\n")
    assert zl(["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "--rounds", "4",
               "--allow-no-ir-diff", "--telemetry-interval", "0", "--config", str(config)]) == 0
    [campaign] = campaigns(tmp_path, "ab")
    cells = cells_of(campaign)
    assert len(cells) == 8 and {seen(c) for c in cells} == {("flush", "flush")}
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["config"]["values"] == {"l2": "flush"}
    report = json.loads((campaign / "report.json").read_text())
    assert report["caliber"]["common"]["l2"] == "flush"


def test_an_unknown_l2_mode_is_refused_before_any_cell(zl, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        zl([*SCREEN, "--l2", "cold"])
    assert exc.value.code == 2
    assert "argument --l2: invalid choice: 'cold'" in capsys.readouterr().err
    assert campaigns(tmp_path, "screen") == []
