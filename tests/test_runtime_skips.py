"""A benchmark that skips at run time (``pytest.skip`` inside it) is reported SKIPPED
with its reason, not NO_ROWS: through the CLI, with the real FlagGems provider and real
pytest cells on the fake checkout of tests/fake_flaggems.py."""

from __future__ import annotations

import json

import fake_flaggems
import pytest
from zl_core.cli import main

pytest.importorskip("triton")

REASON = "fakeskip is not supported on fakevendor"
#: A benchmark that declines a vendor at run time, as FlagGems' benchmarks do.
SKIPPING_BENCHMARK = '''
import flag_gems
import pytest

from . import base


@pytest.mark.fake
def test_fakeskip():
    if flag_gems.vendor_name == "fakevendor":
        pytest.skip("fakeskip is not supported on fakevendor")
    base.GenericBenchmark(op_name="fakeskip", torch_op=base.op_cost(0.02), gems_op=base.op_cost(0.01),
                          input_fn=base.unary_input).run()
'''


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    root = fake_flaggems.build(tmp_path / "FlagGems")
    (root / "benchmark" / "test_fake_skip.py").write_text(SKIPPING_BENCHMARK.lstrip("\n"))
    return fake_flaggems.on_fake_gpu(root, monkeypatch)


def screen(root, runs, *ops) -> int:
    return main(["screen", "--source", str(root), "--backend", "fakegpu", "--ops", *ops,
                 "--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--force-switch",
                 "--runs-root", str(runs)])


@pytest.mark.slow
def test_a_runtime_skip_is_skipped_with_its_reason(checkout, tmp_path, capsys):
    assert screen(checkout, tmp_path / "runs", "fakeskip:fake_skip", "fakeadd:fake") == 0  # a skip is no failure
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("fakeskip"))
    assert "SKIPPED" in line and f"A skipped at run time: {REASON}" in line
    assert "NO_ROWS" not in out
    campaign = next((tmp_path / "runs").glob("screen_*"))
    rows = {r["op"]: r for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    assert rows["fakeskip"]["verdict"] == "SKIPPED"
    assert rows["fakeskip"]["notes"] == f"A skipped at run time: {REASON}"
    assert rows["fakeadd"]["verdict"] not in ("SKIPPED", "NO_ROWS")
    # Side A ran and recorded why; side B was not spent on it.
    identity = json.loads((campaign / "fakeskip" / "A" / "run_identity.json").read_text())
    assert identity["skips"] == [REASON] and identity["rc"] == 0
    assert not (campaign / "fakeskip" / "B").exists()
    # The report says it too.
    assert main(["report", str(campaign), "--json"]) == 0
    model = json.loads(capsys.readouterr().out)
    row = next(r for r in model["rows"] if r["op"] == "fakeskip")
    assert (row["verdict"], row["notes"]) == ("SKIPPED", f"A skipped at run time: {REASON}")


def test_ab_rounds_stop_a_skipping_operator_and_say_why(checkout, tmp_path, capsys):
    assert main(["ab", "--source", str(checkout), "--backend", "fakegpu", "--ops", "fakeskip:fake_skip",
                 "--rounds", "4", "--switch", "FAKE_SWITCH", "--a", "0", "--b", "1", "--force-switch",
                 "--telemetry-interval", "0", "--runs-root", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert f"fakeskip: SKIPPED, 1 round(s) - round 1 side A skipped at run time: {REASON}" in out
    campaign = next((tmp_path / "runs").glob("ab_*"))
    assert [p.name for p in (campaign / "fakeskip").iterdir()] == ["r01"]
    assert [p.name for p in (campaign / "fakeskip" / "r01").iterdir()] == ["A"]
    # The report lists it as skipped with the reason, not as an interrupted round.
    assert "incomplete" not in out
    model = json.loads((campaign / "report.json").read_text())
    assert model["summary"]["skipped"] == [
        {"op": "fakeskip", "reason": f"SKIPPED: r01/A skipped at run time: {REASON}"}]
