"""``zl ab --timing once``: the reference (torch) is timed in round 1's cells only, the
operator alone in every later round, and every cell's identity says "once" so the
campaign's cells compare. Through the CLI, with the real FlagGems provider and real
pytest cells on the fake checkout of tests/fake_flaggems.py."""

from __future__ import annotations

import json

import fake_flaggems
import pytest
from zl_core.cli import main
from zl_core.interface import contract

pytest.importorskip("triton")
pytestmark = pytest.mark.slow


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    return fake_flaggems.on_fake_gpu(fake_flaggems.build(tmp_path / "FlagGems"), monkeypatch)


def ab(root, runs, *more) -> int:
    return main(["ab", "--source", str(root), "--backend", "fakegpu", "--ops", "fakeadd:fake",
                 "--rounds", "4", "--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--force-switch",
                 "--allow-no-ir-diff", "--telemetry-interval", "0", "--runs-root", str(runs), *more])


def test_the_reference_is_timed_in_round_one_only(checkout, tmp_path, capsys):
    assert ab(checkout, tmp_path / "runs", "--timing", "once") == 0
    campaign = next((tmp_path / "runs").glob("ab_*"))
    cells = sorted((campaign / "fakeadd").glob("r*/[AB]"))
    assert len(cells) == 8
    for cell in cells:
        identity = json.loads((cell / "run_identity.json").read_text())
        assert identity["timing"] == contract.REFERENCE_ONCE, cell
        rows = json.loads((cell / "results.json").read_text())["rows"]
        assert rows, cell
        round_one = cell.parent.name == "r01"
        # The reference's latency (and the speedup over it) is in a row only where it was timed.
        assert all((row["torch_latency_ms"] is not None) == round_one for row in rows), cell
        assert all((row["speedup"] is not None) == round_one for row in rows), cell
    # One caliber: the report judged the operator, no refusal.
    model = json.loads((campaign / "report.json").read_text())
    assert model["caliber_problems"] == [] and model["caliber"]["common"]["timing"] == "once"
    assert [(op["op"], op["verdict"]) for op in model["summary"]["operators"]] == [("fakeadd", "NO_CHANGE")]


def test_a_screen_takes_no_timing_plan(checkout, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["screen", "--source", str(checkout), "--backend", "fakegpu", "--ops", "fakeadd:fake",
              "--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--timing", "once",
              "--runs-root", str(tmp_path / "runs")])
    assert exc.value.code == 2
    assert "invalid choice: 'once'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_cell_timing_under_each_plan():
    assert [contract.cell_timing("once", n) for n in (1, 2, 8)] == ["full", "operator", "operator"]
    assert [contract.cell_timing(plan, 5) for plan in contract.TIMINGS] == list(contract.TIMINGS)
