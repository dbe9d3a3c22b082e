"""--l2 warm|flush: the L2 cache graph-timed calls find, from the command line (or a
configuration file) to every cell's environment and identity, and a caliber field that
refuses a comparison of warm with flushed cells (docs/caliber.md). What flushing does
to the timer itself: tests/test_flaggems_timing.py and tests/test_flaggems_cells.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from zl_core.interface import caliber


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
    assert zl([*SCREEN, "--l2", "warm"]) == 0
    assert zl([*SCREEN]) == 0  # the default: flushed (docs/validation/2026-12-07-l2-flush.md)
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


@pytest.mark.slow
def test_ab_rounds_take_the_l2_mode_from_a_configuration_file(zl, tmp_path, monkeypatch):
    config = tmp_path / "zl.yaml"
    config.write_text("ab:\n  l2: warm\n")  # not the default
    assert zl(["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "--rounds", "4",
               "--allow-no-ir-diff", "--telemetry-interval", "0", "--config", str(config)]) == 0
    [campaign] = campaigns(tmp_path, "ab")
    cells = cells_of(campaign)
    assert len(cells) == 8 and {seen(c) for c in cells} == {("warm", "warm")}
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["config"]["values"] == {"l2": "warm"}
    report = json.loads((campaign / "report.json").read_text())
    assert report["caliber"]["common"]["l2"] == "warm"


def test_an_unknown_l2_mode_is_refused_before_any_cell(zl, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        zl([*SCREEN, "--l2", "cold"])
    assert exc.value.code == 2
    assert "argument --l2: invalid choice: 'cold'" in capsys.readouterr().err
    assert campaigns(tmp_path, "screen") == []


@pytest.mark.slow
def test_a_campaign_from_before_the_l2_setting_resumes_warm(zl, tmp_path, capsys):
    assert zl(["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "--rounds", "4",
               "--allow-no-ir-diff", "--telemetry-interval", "0"]) == 0
    [campaign] = campaigns(tmp_path, "ab")
    meta = json.loads((campaign / "campaign.json").read_text())
    del meta["options"]["measure"]["l2"]  # as zl wrote it when every graph timer ran warm
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    for cell in campaign.glob("abs/r0[12]/[AB]"):
        ident = json.loads((cell / "run_identity.json").read_text())
        del ident["l2"]
        (cell / "run_identity.json").write_text(json.dumps(ident))
    for r in (3, 4):
        shutil.rmtree(campaign / "abs" / f"r0{r}")
    status = campaign / "status.tsv"
    status.write_text("\n".join(status.read_text().splitlines()[:5]) + "\n")
    assert zl(["ab", "--resume", str(campaign)]) == 0  # not refused: --l2 was never given
    assert {seen(c) for c in campaign.glob("abs/r0[34]/[AB]")} == {("warm", "warm")}
    capsys.readouterr()
    assert zl(["report", str(campaign)]) == 0  # the older cells read as warm: nothing mixed


@pytest.mark.parametrize("timer,older", [("graph", "warm"), ("direct", "flush")])
def test_an_identity_from_before_the_field_reads_as_what_its_timer_did(timer, older):
    new = {"timer": timer, "autotune_mode": "replay", "replay_source": "x"}
    old = dict(new)
    other = "flush" if older == "warm" else "warm"
    assert caliber.compare({"A": old, "B": {**new, "l2": older}}).ok
    check = caliber.compare({"A": old, "B": {**new, "l2": other}})
    assert check.problems == (f"caliber field 'l2' differs: A={older} B={other}",)


def test_a_sealed_manifest_freezes_the_l2_mode_or_leaves_it_to_the_command(machine, tmp_path, capsys):
    import test_sealed_campaign as sealed
    from zl_core.app import AbOptions, seal

    given = sealed.freeze(tmp_path, sealed.BUILTIN + "l2: warm\n", capsys, name="given")
    assert json.loads((given / "matrix.json").read_text())["measure"]["l2"] == "warm"
    assert seal.frozen_options("ab", given, AbOptions()).measure.l2 == "warm"
    unset = sealed.freeze(tmp_path, sealed.BUILTIN, capsys, name="unset")
    assert "l2" not in json.loads((unset / "matrix.json").read_text())["measure"]
    assert seal.frozen_options("ab", unset, AbOptions()).measure.l2 == "flush"  # the command's default
    bad = tmp_path / "bad.yaml"
    bad.write_text(sealed.BUILTIN + "l2: cold\n")
    assert sealed.zl("freeze", bad, "--out", tmp_path / "bad") == 2
    assert "l2: one of warm, flush, got 'cold'" in sealed.problems(capsys)
