"""``zl ab --retuned``: side R (side B's environment, its own autotune picks) beside A and B,
the three effects per shape (pinned B vs A, shipped R vs A, the autotuner's part R vs B),
the keys whose pick changed, and side A's picks recorded twice as their reference.
Through the CLI, with the real FlagGems provider, real pytest cells and real Triton
Autotuners on the fake checkout of tests/fake_flaggems.py (tests/retuned_fixture.py)."""

from __future__ import annotations

import json
from pathlib import Path

import fake_flaggems
import jsonschema
import pytest
import retuned_fixture
from zl_core.campaigns import state
from zl_core.cli import main
from zl_core.store.layout import CampaignLayout

pytest.importorskip("triton")

SCHEMA = Path(__file__).parents[1] / "packages/zl-core/src/zl_core/schemas/report.schema.json"
SWITCH = ("--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--force-switch", "--telemetry-interval", "0")


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    root = fake_flaggems.build(tmp_path / "FlagGems")
    retuned_fixture.add_to(root)
    return fake_flaggems.on_fake_gpu(root, monkeypatch)


def ab(root: Path, runs: Path, *extra: str) -> int:
    try:
        return main(["ab", "--source", str(root), "--backend", "fakegpu", "--rounds", "4", *SWITCH,
                     "--runs-root", str(runs), *extra])
    except SystemExit as exc:
        return int(exc.code)


def keys_in(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


@pytest.mark.slow
def test_a_changed_pick_splits_the_effect_and_a_steady_one_does_not(checkout, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert ab(checkout, runs, "--ops", "fakeretuned:fake_retuned", "fakesteady:fake_retuned", "--retuned") == 0
    out = capsys.readouterr().out
    campaign = next(runs.glob("ab_*"))
    assert json.loads((campaign / "campaign.json").read_text())["retuned"] is True
    # Three sides every round, A recorded twice in round 1.
    for op in ("fakeretuned", "fakesteady"):
        assert sorted(p.name for p in (campaign / op / "r01").iterdir()) == ["A", "A2", "B", "R"]
        assert sorted(p.name for p in (campaign / op / "r04").iterdir()) == ["A", "B", "R"]
    model = json.loads((campaign / "report.json").read_text())
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(model)
    ops = {o["op"]: o["retuned"] for o in model["summary"]["operators"]}
    costs = retuned_fixture.COSTS

    # fakeretuned: the switch slows A's pick (BLOCK=32) and R re-tunes to BLOCK=64.
    moved = ops["fakeretuned"]
    expected = {"pinned": costs["fakeretuned"]["0"][32] / costs["fakeretuned"]["1"][32],
                "shipped": costs["fakeretuned"]["0"][32] / costs["fakeretuned"]["1"][64],
                "autotune": costs["fakeretuned"]["1"][32] / costs["fakeretuned"]["1"][64]}
    assert [moved[e]["verdict"] for e in expected] == ["SLOWER", "FASTER", "FASTER"]
    for effect, ratio in expected.items():
        assert moved[effect]["estimate"]["estimate_pct"] == pytest.approx((ratio - 1) * 100, abs=0.01)
    changed = moved["picks"]["changed"]
    assert moved["picks"]["keys"] == 2 and len(changed) == 2
    assert {(c["first"].split(",")[0], c["second"].split(",")[0]) for c in changed} == {("BLOCK=32", "BLOCK=64")}
    # The sweeps were timed: the closest the two configs came is A's 30% (R's was 37.5%): no near tie.
    assert {round(c["gap_pct"], 6) for c in changed} == {30.0} and not any(c["near_tie"] for c in changed)
    # A's own picks reproduce (the reference a changed pick is read against).
    assert (moved["pick_noise"]["keys"], moved["pick_noise"]["same"]) == (2, 2)
    assert moved["reading"] == ("picks changed under the switch on 2 of 2 key(s); side A's own picks "
                                "reproduced on 2 of 2 key(s) recorded twice")

    # fakesteady: the same pick under the switch, so shipped is pinned and the autotuner adds nothing.
    steady = ops["fakesteady"]
    assert steady["picks"]["changed"] == [] and steady["picks"]["same"] == 2
    assert steady["pinned"]["verdict"] == steady["shipped"]["verdict"] == "FASTER"
    assert steady["shipped"]["estimate"]["estimate_pct"] == pytest.approx(
        steady["pinned"]["estimate"]["estimate_pct"], abs=1e-9)
    assert steady["autotune"]["verdict"] == "NO_CHANGE"
    for row in (r for r in model["rows"] if r["op"] == "fakesteady"):
        assert row["retuned"]["shipped"]["stats"]["estimate_pct"] == pytest.approx(
            row["stats"]["estimate_pct"], abs=1e-9)
        assert row["retuned"]["r_ms"] == row["b_ms"]

    # Every form names the three effects and the changed picks.
    assert "shipped (R vs A) FASTER +25.00%" in out and "BLOCK=64" in out
    for fmt in ("md", "html"):
        assert main(["report", str(campaign), "--format", fmt]) == 0
        page = capsys.readouterr().out
        assert "shipped (R vs A)" in page and "R vs B" in page and "near tie" in page and "BLOCK=64" in page

    # Resumed, it stays re-tuned (its finished cells kept, none run again).
    state.mark(CampaignLayout(campaign), state.INTERRUPTED, pid=None)
    assert main(["ab", "--resume", str(campaign)]) == 0
    resumed = json.loads((campaign / "report.json").read_text())
    assert resumed["summary"]["retuned"]["picks"] == model["summary"]["retuned"]["picks"]


@pytest.mark.slow
def test_a_campaign_without_retuned_is_unchanged_and_cannot_be_resumed_with_it(checkout, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert ab(checkout, runs, "--ops", "fakesteady:fake_retuned") == 0
    campaign = next(runs.glob("ab_*"))
    record = json.loads((campaign / "campaign.json").read_text())
    model = json.loads((campaign / "report.json").read_text())
    assert "retuned" not in record and "retuned" not in keys_in(model)
    assert sorted(p.name for p in (campaign / "fakesteady" / "r01").iterdir()) == ["A", "B"]
    assert [p.name for p in (campaign / "fakesteady" / "r01" / "A" / "autotune_records").iterdir()]
    # A re-tuned report has exactly these keys and "retuned" besides, at every level.
    row_keys, op_keys, summary_keys = set(model["rows"][0]), set(model["summary"]["operators"][0]), set(model["summary"])
    assert {"verdict", "stats", "a_ms", "b_ms"} <= row_keys and "fdr" in summary_keys
    capsys.readouterr()

    state.mark(CampaignLayout(campaign), state.INTERRUPTED, pid=None)
    assert ab(checkout, runs, "--resume", str(campaign), "--retuned") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--retuned True (campaign: False)" in err[0]

    retuned = tmp_path / "retuned"
    assert ab(checkout, retuned, "--ops", "fakesteady:fake_retuned", "--retuned") == 0
    other = json.loads((next(retuned.glob("ab_*")) / "report.json").read_text())
    assert set(other["rows"][0]) == row_keys | {"retuned"}
    assert set(other["summary"]["operators"][0]) == op_keys | {"retuned"}
    assert set(other["summary"]) == summary_keys | {"retuned"}


def test_retuned_refuses_what_cannot_re_tune(checkout, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert ab(checkout, runs, "--ops", "fakesteady:fake_retuned", "--retuned", "--aa") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--aa" in err[0] and "--retuned" in err[0]
    assert not runs.exists() or not list(runs.glob("ab_*"))


def test_plan_counts_side_r_and_the_second_record(checkout, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert ab(checkout, runs, "--ops", "fakesteady:fake_retuned", "--plan") == 0
    assert "8 cells each" in capsys.readouterr().out
    assert ab(checkout, runs, "--ops", "fakesteady:fake_retuned", "--plan", "--retuned") == 0
    assert "13 cells each (sides A, B and R, and A's second record)" in capsys.readouterr().out
