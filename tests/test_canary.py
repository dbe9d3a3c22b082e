"""Canary operators: a long or frozen campaign runs the plan's first operator of each lane
before the rest, and a failed canary stops it before the rest is spent (through the CLI,
on the failing suite of tests/test_bad_input.py: its cells are real processes)."""

from __future__ import annotations

import json

import pytest
from test_bad_input import failing  # noqa: F401 - the fixture: an in-test suite of real processes
from zl_core.campaigns import canary
from zl_core.cli import main


def _campaign(root):
    (campaign,) = root.glob("screen_*")
    return campaign


def test_a_failed_canary_stops_the_campaign_before_the_rest(failing, tmp_path, capsys):  # noqa: F811
    rc = main(["screen", "--suite", "failing", "--ops", "crash", "fine", "--canary", "on",
               "--runs-root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 6 and "Traceback" not in out + err
    campaign = _campaign(tmp_path)
    (line,) = [ln for ln in err.splitlines() if "canary operator(s)" in ln]
    assert line == ("zl screen: canary operator(s) crash failed (see crash/.../run.log), so the other 1 "
            "operator(s) were not run; fix the cause and start the campaign again, or run the "
            f"rest as it is with: zl screen --resume {campaign}")
    assert (campaign / "crash" / "A").is_dir() and not (campaign / "fine").exists()
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["state"] == "interrupted"  # resumable: the rest can still be run
    # The rest, as it is: the failed canary is kept, the rest runs, the exit still says it failed.
    assert main(["screen", "--resume", str(campaign)]) == 6
    rows = {r["op"]: r["verdict"] for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    assert set(rows) == {"crash", "fine"} and rows["fine"] != "FAILED"


def test_a_passing_canary_lets_the_rest_run(failing, tmp_path, capsys):  # noqa: F811
    assert main(["screen", "--suite", "failing", "--ops", "fine", "crash", "--canary", "on",
                 "--runs-root", str(tmp_path)]) == 6  # crash still fails: reported, not hidden
    err = capsys.readouterr().err
    assert "canary: fine first, one per lane" in err and "canary operator(s)" not in err
    assert (_campaign(tmp_path) / "crash" / "A").is_dir()


def test_without_canaries_every_operator_runs(failing, tmp_path, capsys):  # noqa: F811
    assert main(["screen", "--suite", "failing", "--ops", "crash", "fine", "--canary", "off",
                 "--runs-root", str(tmp_path)]) == 6
    assert "canary" not in capsys.readouterr().err
    assert (_campaign(tmp_path) / "fine" / "A").is_dir()


@pytest.mark.parametrize("choice, tasks, lanes, resumed, wanted", [
    ("auto", 2, 1, False, False),   # a short campaign
    ("auto", 5, 1, False, True),    # more than 4 operators per lane: long
    ("auto", 8, 2, False, False),
    ("auto", 9, 2, False, True),
    ("on", 2, 1, False, True),
    ("on", 2, 2, False, False),     # one operator per lane: the canaries would be the campaign
    ("on", 9, 1, True, False),      # resumed: its canaries ran when it started
    ("off", 50, 1, False, False),
])
def test_when_a_campaign_runs_canaries(choice, tasks, lanes, resumed, wanted):
    assert canary.wanted(choice, tasks=tasks, lanes=lanes, resumed=resumed) is wanted


def test_a_frozen_campaign_runs_them_whatever_its_length():
    assert canary.choice_for("auto", frozen=True) == "on"
    assert canary.choice_for("auto", frozen=False) == "auto"
    assert canary.split(["a", "b", "c", "d"], 3) == (["a", "b", "c"], ["d"])


def test_a_frozen_run_takes_no_canary_choice(failing, tmp_path, capsys):  # noqa: F811
    assert main(["screen", "--manifest", str(tmp_path), "--canary", "off"]) == 2
    err = capsys.readouterr().err
    assert "--manifest runs the frozen matrix as it was frozen; drop --canary" in err
