"""A campaign's finish is a transaction (app.seal.finish_campaign): its report, classes,
receipts and seal are written first and campaign.json marked complete last, in one
rename. A signal at any step of the finish leaves the campaign ``finishing``: the command
exits 128 + the signal with a line naming the resume, `zl report` and `zl reaccount` say
it is not finished, and `--resume` writes the whole finish again, so a sealed campaign
ends sealed with receipts that check. Real cells of the fake host's sleepy suite; the
signal is the exception zl's handler raises, injected at each step in turn."""

from __future__ import annotations

import json
import os
import signal

import pytest
from sealed_manifests import sleepy_head
from zl_core.cli import main
from zl_core.foundation import interrupts
from zl_core.seal import receipts

MANIFEST = sleepy_head("finish-cut", "a finish cut by a signal is resumed to a sealed end") + "  - op: abs\n"

#: Each step of the finish, by where zl calls it: (module attribute patched, what it is).
STEPS = {
    "status flags": ("zl_core.campaigns.ab_campaign.rewrite_flags", "ab"),
    "report": ("zl_core.app.reports.keep_report_json", "ab"),
    "classes": ("zl_core.app.seal.write_classes", "ab"),
    "receipts": ("zl_core.seal.receipts.write", "both"),
    "seal": ("zl_core.seal.receipts.seal", "ab"),
}


@pytest.fixture
def host(lanes_main, monkeypatch, tmp_path):
    monkeypatch.setenv("ZL_FAKE_SLEEP", "0.02")
    return tmp_path


def cut_once(monkeypatch, target: str) -> list[int]:
    """Make ``target`` raise zl's interrupt (SIGTERM) on its first call only."""
    import importlib

    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    real = getattr(module, name)
    calls: list[int] = []

    def cut(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise interrupts.Interrupted(signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, cut)
    return calls


def state(campaign) -> str:
    return json.loads((campaign / "campaign.json").read_text())["state"]


@pytest.mark.slow
@pytest.mark.parametrize("step", [s for s, (_, kind) in STEPS.items() if kind in ("ab", "both")])
def test_a_sealed_ab_campaign_cut_in_its_finish_is_resumed_to_a_sealed_end(host, monkeypatch, capsys, step):
    manifest = host / "m.yaml"
    manifest.write_text(MANIFEST)
    assert main(["freeze", str(manifest), "--out", str(host / "frozen")]) == 0
    calls = cut_once(monkeypatch, STEPS[step][0])
    capsys.readouterr()
    assert main(["ab", "--manifest", str(host / "frozen"), "--telemetry-interval", "0"]) == 128 + signal.SIGTERM
    assert calls, f"the {step} step was never reached"
    [campaign] = (host / "runs").glob("ab_*")
    err = capsys.readouterr().err
    assert f"complete them with: zl ab --resume {campaign}" in err and "Traceback" not in err
    assert state(campaign) == "finishing"
    # Not finished: the report and the re-accounting say so, and how to finish it.
    assert main(["report", str(campaign)]) == 6
    assert f"were not all written. Finish it with zl ab --resume {campaign}" in capsys.readouterr().err
    assert main(["reaccount", str(campaign), "--out", str(host / "re")]) == 2
    assert "finishing, not sealed yet; finish it with zl ab --resume" in capsys.readouterr().err
    # The resume writes the finish again, whole.
    assert main(["ab", "--resume", str(campaign), "--telemetry-interval", "0"]) == 0, capsys.readouterr().err
    assert state(campaign) == "complete"
    assert receipts.check(campaign) == []
    assert (campaign / "classes.json").is_file() and (campaign / "report.json").is_file()
    assert all(not (p.stat().st_mode & 0o222) for p in campaign.rglob("*") if p.is_file())
    assert main(["reaccount", str(campaign), "--out", str(host / "re")]) == 0


def test_a_screen_cut_in_its_finish_is_completed_by_its_resume(host, monkeypatch, capsys):
    calls = cut_once(monkeypatch, STEPS["receipts"][0])
    argv = ["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs"]
    assert main(argv) == 128 + signal.SIGTERM and calls
    [campaign] = (host / "runs").glob("screen_*")
    assert f"complete them with: zl screen --resume {campaign}" in capsys.readouterr().err
    assert state(campaign) == "finishing" and not (campaign / "receipt.json").exists()
    assert main(["report", str(campaign)]) == 6
    assert "every cell ended, but its results" in capsys.readouterr().err
    assert main(["screen", "--resume", str(campaign)]) == 0
    assert state(campaign) == "complete" and receipts.check(campaign) == []
    assert os.access(campaign / "campaign.json", os.W_OK)  # not frozen: not sealed


def test_a_signal_between_two_steps_of_the_finish_says_how_to_complete_it(tmp_path):
    """The finish is several steps (the engine's, then the report's and receipts'): a signal
    that lands between two of them cuts the finish as much as one inside a step, and says
    the same. Once the campaign is complete it says nothing of a finish."""
    from zl_core.campaigns import state

    campaign = tmp_path / "ab_x"
    with interrupts.handling_signals():
        with state.finishing(campaign, "zl ab"):
            pass  # one step done; the next has not begun
        with pytest.raises(interrupts.Interrupted) as cut:
            os.kill(os.getpid(), signal.SIGTERM)
    assert f"complete them with: zl ab --resume {campaign}" in str(cut.value)
    with interrupts.handling_signals():
        interrupts.finishing("")  # as finish_campaign does once campaign.json says complete
        with pytest.raises(interrupts.Interrupted) as plain:
            os.kill(os.getpid(), signal.SIGTERM)
    assert "--resume" not in str(plain.value)
    # The signal ended that command: the next one in this process starts uninterrupted.
    assert interrupts.requested() is None
