"""The H100 A/A campaign at the default 8 rounds (docs/validation/2026-12-07-h100-aa-eight-rounds.md),
read back without a device: the kept campaign re-judged by this checkout calls nothing, and
the side swaps of docs/validation/scripts/aa_flip_rates.py give the figures the write-up
and docs/statistics.md quote. A change of the rules that moves them must update both."""

from __future__ import annotations

import importlib.util
import json
import tarfile
from pathlib import Path

import pytest
from zl_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "validation" / "data" / "2026-12-07-h100-aa-eight-rounds"


def _flip_rates():
    spec = importlib.util.spec_from_file_location(
        "aa_flip_rates", ROOT / "docs" / "validation" / "scripts" / "aa_flip_rates.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_kept_campaign_rejudged_calls_nothing(tmp_path, capsys):
    with tarfile.open(DATA / "campaign.tgz") as tar:
        tar.extractall(tmp_path, filter="data")
    campaign = next((tmp_path / "runs").glob("aa_*"))
    out = tmp_path / "report.json"
    assert main(["report", str(campaign), "--json", "--out", str(out)]) == 0
    model = json.loads(out.read_text())
    assert "the verdicts agree with the judgement kept" in model["summary"]["judged"]["text"]
    verdicts = [row["verdict"] for row in model["rows"]]
    assert len(verdicts) == 15
    assert verdicts.count("NO_CHANGE") == 9 and verdicts.count("INCONCLUSIVE") == 6
    assert [o["verdict"] for o in model["summary"]["operators"]] == ["INCONCLUSIVE"] * 3


@pytest.mark.slow
def test_side_swaps_give_the_quoted_rates(capsys, monkeypatch):
    flips = _flip_rates()
    monkeypatch.setattr("sys.argv", ["aa_flip_rates.py", str(DATA / "report.json")])
    flips.main()
    printed = capsys.readouterr().out
    null, threshold = printed.split("side B faster by 1%")
    assert "own test: FASTER 0 (0.00%), SLOWER 0 (0.00%)" in null  # rules 4: 2 and 2
    assert "after the campaign step: FASTER 0 (0.00%), SLOWER 0 (0.00%)" in null
    assert "patterns with any operator called: 0 of 256" in null
    assert "own test: FASTER 61 (1.59%), SLOWER 0 (0.00%)" in threshold  # rules 4: 2.58%
    assert "after the campaign step: FASTER 16 (0.42%)" in threshold  # rules 5 and 6
    # the noisiest shape, on its own rounds since rules 5 (rules 4: 16 of 256, its siblings' level)
    assert "[torch.Size([16, 1024, 1024]), torch.Size([16, 1024, 1024])]: 5 of 256" in threshold
