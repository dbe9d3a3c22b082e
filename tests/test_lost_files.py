"""A campaign whose files no longer match what it recorded is never reported as a success:
cells its status.tsv lists as finished that are gone or unfinished make `zl report` exit 6,
naming them, whatever --fail-on asks (real cells: tests/fake_cell.py)."""

from __future__ import annotations

import shutil

import pytest
from zl_core.cli import main
from zl_core.interface import caliber


@pytest.fixture
def campaign(fake_host, tmp_path, capsys):
    assert main(["ab", "--rounds", "4", "--suite", "fake", "--ops", "gemm", "--allow-no-ir-diff",
                 "--runs-root", str(tmp_path / "runs"), "--telemetry-interval", "0"]) == 0
    capsys.readouterr()
    return next((tmp_path / "runs").glob("ab_*"))


@pytest.mark.parametrize("loss", ["a round folder", "the operator's folder", "a cell's identity",
                                  "a cell marked unfinished"])
def test_a_complete_campaign_missing_cells_is_reported_incomplete(campaign, capsys, loss):
    if loss == "a round folder":
        shutil.rmtree(campaign / "gemm" / "r03")
        gone = ["gemm/r03/A", "gemm/r03/B"]
    elif loss == "the operator's folder":
        shutil.rmtree(campaign / "gemm")
        gone = ["gemm/r01/A"]
    elif loss == "a cell's identity":
        (campaign / "gemm" / "r02" / "B" / caliber.IDENTITY_NAME).unlink()
        gone = ["gemm/r02/B"]
    else:
        caliber.merge_identity(campaign / "gemm" / "r04" / "A", {"interrupted": "SIGKILL"})
        gone = ["gemm/r04/A"]
    for extra in ([], ["--fail-on", "any"]):
        assert main(["report", str(campaign), *extra]) == 6
        out, err = capsys.readouterr()
        assert out == "" and "says complete, but" in err and all(cell in err for cell in gone)
    # What is left can still be reported; a cell without its identity has unknown conditions.
    expected = 4 if loss == "a cell's identity" else 0
    assert main(["report", str(campaign), "--allow-incomplete"]) == expected


def test_an_untouched_complete_campaign_still_reports(campaign, capsys):
    assert main(["report", str(campaign)]) == 0
