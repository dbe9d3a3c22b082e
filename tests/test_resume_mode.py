"""A resume never changes how a campaign's finished cells were judged: an IR-only screen
resumed where a device has appeared is refused (unless --compile-only is given again), and
a timed campaign resumed where its device is gone is refused, not turned IR-only. Through
the CLI, with real Triton compiles of the built-in suite and a fake nvidia-smi on PATH."""

from __future__ import annotations

import json

import pytest
from fake_tools import write_tool
from zl_core.cli import main


def zl(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as exc:
        return int(exc.code)


def interrupted_ir_only_screen(tmp_path, capsys):
    assert zl("screen", "--suite", "builtin", "--switch", "DISABLE_MMA_V3", "--ops", "add") == 0
    [campaign] = (tmp_path / "runs").glob("screen_*")
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["compile_only"] is True
    # The mode the cells ran in is what the campaign records, not what was typed.
    assert meta["options"]["measure"]["compile_only"] is True and meta["options"]["measure"]["target"]
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    verdicts = (campaign / "screen.tsv").read_text()
    capsys.readouterr()
    return campaign, verdicts


@pytest.mark.slow
def test_an_ir_only_screen_resumed_where_a_device_appeared_is_refused(machine, tmp_path, capsys):
    campaign, verdicts = interrupted_ir_only_screen(tmp_path, capsys)
    write_tool(machine, "nvidia-smi", "0\n")  # a device is visible now
    assert zl("screen", "--resume", str(campaign)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "is an IR-only screen" in err[0] and "device (0)" in err[0] and "--compile-only" in err[0]
    assert (campaign / "screen.tsv").read_text() == verdicts  # nothing rerun, nothing rejudged
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "interrupted"
    # Asked again with --compile-only, it continues as it began.
    assert zl("screen", "--resume", str(campaign), "--compile-only") == 0
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["state"] == "complete" and meta["compile_only"] is True
    assert (campaign / "screen.tsv").read_text() == verdicts


@pytest.mark.slow
def test_an_ir_only_screen_resumes_where_there_is_still_no_device(machine, tmp_path, capsys):
    campaign, verdicts = interrupted_ir_only_screen(tmp_path, capsys)
    assert zl("screen", "--resume", str(campaign)) == 0
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    assert (campaign / "screen.tsv").read_text() == verdicts


def test_a_timed_screen_resumed_without_its_device_is_refused_not_turned_ir_only(machine, tmp_path, capsys):
    campaign, _ = interrupted_ir_only_screen(tmp_path, capsys)
    meta = json.loads((campaign / "campaign.json").read_text())
    # As a timed screen records itself (campaign.json of an H200 screen: device 0, no target).
    meta.update(compile_only=False, target=None, device="0")
    meta["options"]["measure"].update(compile_only=False, target=None)
    (campaign / "campaign.json").write_text(json.dumps(meta))
    assert zl("screen", "--resume", str(campaign)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "timed its cells on cuda device 0" in err[0] and "no cuda device found" in err[0]
    assert json.loads((campaign / "campaign.json").read_text())["compile_only"] is False
