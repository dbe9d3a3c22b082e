"""A report says which rules judged a campaign when it finished (its kept report.json) and
which judge it now, and shows both verdicts where they differ: on the H200 A/B campaign of
2026-12-03 whose bmm was SLOWER under rules 1 and is INCONCLUSIVE under later rules (3 rounds)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from zl_core.cli import main
from zl_core.report.dispatch import build
from zl_core.stats import RULES

zl_report = pytest.importorskip("zl_report")

ARCHIVE = Path(__file__).resolve().parents[1] / "docs/validation/data/2026-12-03-ab-bmm-addmm.tgz"


@pytest.fixture
def campaign(tmp_path) -> Path:
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(tmp_path, filter="data")
    [meta] = [p for p in tmp_path.rglob("campaign.json") if p.parent.name.startswith("ab_")]
    return meta.parent


def test_a_verdict_judged_otherwise_when_the_campaign_finished_shows_both(campaign, capsys):
    kept = (campaign / "report.json").read_bytes()
    judged = build(campaign, allow_mismatch=True)["summary"]["judged"]
    assert judged["then"]["rules"] == 1 and judged["now"]["rules"] == RULES
    assert {"op": "bmm", "then": "SLOWER", "now": "INCONCLUSIVE"} in judged["changed_operators"]
    assert len(judged["changed_shapes"]) == 5 and all(x["then"] == "SLOWER" for x in judged["changed_shapes"])
    assert any(f"rules 1 when it finished and by rules {RULES} now" in w for w in judged["why"])
    for fmt in ("text", "md", "html"):
        assert main(["report", str(campaign), "--format", fmt, "--allow-caliber-mismatch"]) == 0
        out = capsys.readouterr().out
        assert "Judged then and now" in out and "then (rules 1)" in out and f"now (rules {RULES})" in out, fmt
        if fmt == "html":  # both verdicts in every row, never folded into a line above the table
            assert "<th>then (rules 1)</th>" in out and "every row: then" not in out
    assert (campaign / "report.json").read_bytes() == kept  # the kept judgement is never rewritten


def test_nothing_is_shown_where_the_kept_judgement_is_todays(campaign):
    today = build(campaign, allow_mismatch=True)
    (campaign / "report.json").write_text(json.dumps(today, default=str))
    model = build(campaign, allow_mismatch=True)
    judged = model["summary"]["judged"]
    assert judged["then"]["rules"] == judged["now"]["rules"] == RULES
    assert not judged["changed_operators"] and not judged["changed_shapes"] and not judged["why"]
    assert "Judged then and now" not in zl_report.render(model, "text")


def test_the_same_rules_giving_another_verdict_say_the_cells_changed(campaign):
    today = build(campaign, allow_mismatch=True)
    today["summary"]["operators"][0]["verdict"] = "FASTER"
    (campaign / "report.json").write_text(json.dumps(today, default=str))
    judged = build(campaign, allow_mismatch=True)["summary"]["judged"]
    assert judged["changed_operators"][0]["then"] == "FASTER"
    assert judged["why"] == [("same rules and threshold: the campaign's cells, or how zl reads them, "
                              "changed after report.json was written")]


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", json.dumps({"kind": "screen"})])
def test_a_damaged_kept_report_is_named_and_the_report_still_renders(campaign, damage):
    (campaign / "report.json").write_text(damage)
    model = build(campaign, allow_mismatch=True)
    judged = model["summary"]["judged"]
    assert judged["then"] is None and "report.json" in judged["text"]
    assert "Judged then and now" not in zl_report.render(model, "text")


def test_a_campaign_without_a_kept_report_is_judged_by_todays_rules_only(campaign):
    (campaign / "report.json").unlink()
    judged = build(campaign, allow_mismatch=True)["summary"]["judged"]
    assert judged["then"] is None and judged["text"] == f"judged by rules {RULES}"
