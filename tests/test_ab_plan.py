"""``zl ab --plan``: the operators and cells an A/B campaign would run and its estimate from
this host's earlier A/B cells, with nothing run or written (the sleepy suite's real cells
on the fake four-GPU host)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from zl_core.interface import caliber, phases

# real A/B campaigns and screens, tens of seconds each
pytestmark = pytest.mark.slow


def campaigns(tmp_path: Path, kind: str) -> list[Path]:
    return sorted((tmp_path / "runs").glob(f"{kind}_*"))


def snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")} if root.exists() else set()


def seconds_of(text: str, op: str) -> float:
    line = next(x for x in text.splitlines() if x.strip().startswith(op + " "))
    value, unit = re.search(r"([\d.]+) (s|min|h)\b", line).groups()
    return float(value) * {"s": 1, "min": 60, "h": 3600}[unit]


def test_without_history_the_plan_lists_the_cells_and_says_it_cannot_estimate(lanes_main, tmp_path, capsys):
    assert lanes_main(["ab", "--plan", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs",
                       "add", "--rounds", "6"]) == 0
    out = capsys.readouterr().out
    assert "2 operator(s), 0 control(s), 6 rounds: 12 cells each" in out
    assert "abs" in out and "unseen" in out and "estimate: none" in out
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_plan_costs_each_operator_from_its_earlier_cells(lanes_main, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "abs slowop neg")
    assert lanes_main(["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "slowop",
                       "--rounds", "4", "--allow-no-ir-diff", "--telemetry-interval", "0"]) == 0
    [campaign] = campaigns(tmp_path, "ab")
    walls = {(op, c.parent.name, c.name): caliber.read_identity(c)[phases.KEY]["wall_s"]
             for op in ("abs", "slowop") for c in (campaign / op).glob("r*/*")}
    before = snapshot(tmp_path / "runs")
    capsys.readouterr()
    assert lanes_main(["ab", "--plan", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs",
                       "slowop", "neg", "--rounds", "8"]) == 0
    out = capsys.readouterr().out
    assert snapshot(tmp_path / "runs") == before  # nothing run or written
    assert "16 cells each" in out and "estimates from 1 earlier A/B campaign(s)" in out
    expected = {}
    for op in ("abs", "slowop"):
        # round 1's cells as they ran, rounds 2-8 at the median of rounds 2-4, side by side
        later = {side: sorted(walls[(op, r, side)] for r in ("r02", "r03", "r04")) for side in "AB"}
        expected[op] = walls[(op, "r01", "A")] + walls[(op, "r01", "B")] + 7 * (later["A"][1] + later["B"][1])
        # printed to the second, or to a tenth of a minute
        assert seconds_of(out, op) == pytest.approx(expected[op], abs=3.5), op
    assert seconds_of(out, "slowop") > seconds_of(out, "abs")
    assert "1 unseen operator(s) counted at the median" in out  # neg never ran here
    timed = re.search(r"the device\(s\) time ([\d.]+ \w+) of it, which no pipeline overlaps", out)
    assert timed and 0 < duration_s(timed.group(1)) < duration_s(re.search(
        r"estimate: ([\d.]+ \w+) one after", out).group(1))
    capsys.readouterr()
    assert lanes_main(["ab", "--plan", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs",
                       "slowop", "--rounds", "8", "--pipeline", "3"]) == 0
    piped = capsys.readouterr().out
    assert "pipeline 3" in piped
    for op in ("abs", "slowop"):  # an operator's own cells cost what they cost
        assert seconds_of(piped, op) == seconds_of(out.replace("neg", "-"), op)
    # The lanes: two operators' cells overlap their setup with each other's holds, but an
    # operator's cells run one after another, so the campaign takes at least its longest.
    one_after, about = (duration_s(x) for x in re.search(
        r"estimate: ([\d.]+ \w+) one after the other, about ([\d.]+ \w+) over 1 device", piped).groups())
    assert one_after == pytest.approx(expected["abs"] + expected["slowop"], abs=3.5)
    assert max(expected.values()) - 1.0 <= about <= one_after - 2.0


def duration_s(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"s": 1, "min": 60, "h": 3600}[unit]


def test_the_plan_takes_the_screens_changed_operators(lanes_main, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "abs gotchanged negchanged")
    assert lanes_main(["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs",
                       "gotchanged", "negchanged"]) == 0
    [screen] = campaigns(tmp_path, "screen")
    changed = [r["op"] for r in json.loads((screen / "screen.json").read_text())["ops"]
               if r["verdict"] == "IR_CHANGED"]
    assert changed == ["gotchanged", "negchanged"]
    capsys.readouterr()
    assert lanes_main(["ab", "--plan", "--controls", "1"]) == 0
    out = capsys.readouterr().out
    assert f"2 operator(s) from screen {screen}, 1 control(s), 8 rounds: 16 cells each" in out
    assert "gotchanged" in out and "negchanged" in out and "  abs" in out
