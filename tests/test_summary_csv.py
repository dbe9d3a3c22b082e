"""summary.csv: every measured row of a campaign, one CSV line each, written when the
screen or the A/B campaign ends (through the CLI, with the fake suite's real cell
processes: tests/fake_cell.py writes two rows per cell)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from zl_core.campaigns.summary import COLUMNS
from zl_core.cli import main


def _read(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _results(cell: Path) -> list[dict]:
    return json.loads((cell / "results.json").read_text())["rows"]


def test_a_screen_writes_every_row_of_every_cell(fake_host, tmp_path, capsys):
    root = tmp_path / "runs"
    assert main(["screen", "--ops", "gemm", "pointwise", "--suite", "fake",
                 "--runs-root", str(root)]) == 0
    campaign = next(root.glob("screen_*"))
    header, lines = _read(campaign / "summary.csv")
    # The neutral columns first, then the provider's own numbers, sorted.
    assert header == [*COLUMNS, "speedup", "torch_latency_ms"]
    assert [(ln["op"], ln["side"]) for ln in lines] == [
        ("gemm", "A"), ("gemm", "A"), ("gemm", "B"), ("gemm", "B"),
        ("pointwise", "A"), ("pointwise", "A"), ("pointwise", "B"), ("pointwise", "B")]
    for ln in lines:
        written = next(r for r in _results(campaign / ln["cell"]) if r["size_detail"] == ln["size_detail"])
        assert float(ln["latency_ms"]) == written["latency_ms"]
        assert float(ln["speedup"]) == written["speedup"]
        assert (ln["round"], ln["backend"], ln["device"], ln["status"], ln["timer"], ln["fallback"]) == (
            "0", "fakegpu", "0", "SUCCESS", "graph", "0")
    # The switch's value per side, as status.tsv has it; B of gemm is the fake's 5% slower side.
    gemm_b = [ln for ln in lines if ln["op"] == "gemm" and ln["side"] == "B"]
    assert {ln["switch_value"] for ln in gemm_b} == {"1"}
    assert float(gemm_b[0]["latency_ms"]) == 1.05
    # The campaign's receipt covers it like its other tables.
    receipt = json.loads((campaign / "receipt.json").read_text())
    assert "summary.csv" in receipt["tables"]


@pytest.mark.slow
def test_an_ab_campaign_writes_every_round_and_side(fake_host, tmp_path, capsys):
    root = str(tmp_path / "runs")
    assert main(["ab", "--ops", "gemm", "pointwise", "--rounds", "4", "--suite", "fake",
                 "--runs-root", root, "--telemetry-interval", "0"]) == 0
    campaign = next((tmp_path / "runs").glob("ab_*"))
    assert (campaign / "report.json").is_file()
    _, every = _read(campaign / "summary.csv")
    # pointwise's TTGIR is the same on both sides: stopped after round 1, its cells flagged.
    quiet = [ln for ln in every if ln["op"] == "pointwise"]
    assert [(ln["round"], ln["side"], ln["cell_flags"]) for ln in quiet] == [
        ("1", side, "SWITCH_NO_IR_DIFF") for side in "AABB"]
    lines = [ln for ln in every if ln["op"] == "gemm"]
    assert every[: len(lines)] == lines  # plan order
    cells = [(ln["round"], ln["side"], ln["cell"]) for ln in lines]
    assert len(lines) == 4 * 2 * 2
    assert sorted({c[:2] for c in cells}) == [(str(r), s) for r in (1, 2, 3, 4) for s in "AB"]
    assert {c[2] for c in cells if c[:2] == ("3", "B")} == {"gemm/r03/B"}


def test_a_cell_whose_rows_cannot_be_read_is_named_and_left_out(fake_host, tmp_path, capsys, caplog):
    from zl_core.campaigns.summary import write_summary

    root = tmp_path / "runs"
    assert main(["screen", "--ops", "gemm", "--suite", "fake", "--runs-root", str(root)]) == 0
    campaign = next(root.glob("screen_*"))
    (campaign / "gemm" / "B" / "results.json").chmod(0o644)
    (campaign / "gemm" / "B" / "results.json").write_text("{not json")
    write_summary(campaign, fake_host)
    _, lines = _read(campaign / "summary.csv")
    assert [ln["side"] for ln in lines] == ["A", "A"]
    assert "summary.csv: gemm/B left out: corrupt results file" in caplog.text
