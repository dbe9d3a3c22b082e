"""FOREIGN_VENDOR_MODULE reaches the screen table, screen.json and the reports, not only
a cell's run.log: through the CLI, with the real FlagGems provider and real pytest cells on
the fake checkout (tests/fake_flaggems.py: FAKE_FOREIGN makes its flag_gems import two
other vendors' modules)."""

from __future__ import annotations

import json

import pytest
from test_runtime_skips import checkout  # noqa: F401 - the fixture: the fake checkout, its host
from zl_core.cli import main

pytest.importorskip("triton")

SAID = "FOREIGN_VENDOR_MODULE active=fakevendor loaded=fakevendorx,nvidia"
WHY = "(the benchmark imported another vendor's implementation: is it what this device runs?)"
SIDES = ("--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--force-switch")


def test_the_screen_table_and_its_report_name_the_foreign_vendors(checkout, tmp_path, capsys,  # noqa: F811
                                                                 monkeypatch):
    monkeypatch.setenv("FAKE_FOREIGN", "1")
    assert main(["screen", "--source", str(checkout), "--backend", "fakegpu", "--ops", "fakeadd:fake",
                 *SIDES, "--runs-root", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("fakeadd"))
    assert f"A: {SAID} {WHY}" in line and f"B: {SAID} {WHY}" in line
    campaign = next((tmp_path / "runs").glob("screen_*"))
    (row,) = json.loads((campaign / "screen.json").read_text())["ops"]
    assert row["notes"].startswith(f"A: {SAID} {WHY}; B: {SAID}")
    assert main(["report", str(campaign), "--json"]) == 0
    (reported,) = json.loads(capsys.readouterr().out)["rows"]
    assert reported["notes"] == row["notes"]


def test_a_screen_without_foreign_modules_says_nothing_of_them(checkout, tmp_path, capsys,  # noqa: F811
                                                               monkeypatch):
    monkeypatch.delenv("FAKE_FOREIGN", raising=False)
    assert main(["screen", "--source", str(checkout), "--backend", "fakegpu", "--ops", "fakeadd:fake",
                 *SIDES, "--runs-root", str(tmp_path / "runs")]) == 0
    assert "FOREIGN_VENDOR_MODULE" not in capsys.readouterr().out


@pytest.mark.slow
def test_the_rounds_report_names_them_once_per_operator(checkout, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("FAKE_FOREIGN", "1")
    assert main(["ab", "--source", str(checkout), "--backend", "fakegpu", "--ops", "fakeadd:fake",
                 "--rounds", "4", *SIDES, "--telemetry-interval", "0",
                 "--runs-root", str(tmp_path / "runs")]) == 0
    campaign = next((tmp_path / "runs").glob("ab_*"))
    (op,) = json.loads((campaign / "report.json").read_text())["summary"]["operators"]
    foreign = [n for n in op["notes"] if "FOREIGN_VENDOR_MODULE" in n]
    assert foreign == [f"r01/A: {SAID} {WHY}"]
