"""Classes G/C/B/R/K/X beside the verdicts of a sealed A/B campaign, and re-accounting a
sealed run under another launch floor without a device: the rule itself on constructed
evidence, then a frozen campaign of the sleepy suite over a fake CUDA host (its cells
write TTGIR with layout conversions, a launch index and per-side latencies)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from sealed_manifests import sleepy_head
from zl_core.cli import main
from zl_core.decisions.status import latest_by_cell, read_status
from zl_core.interface import caliber, phases
from zl_core.seal.classes import Correctness, Evidence, classify, demotes
from zl_core.stats import RULES

OK = Correctness(passed=12)
WRONG = Correctness(passed=10, failed=2)


def cls(**kw) -> str:
    base = {"op": "op", "correctness_a": OK, "correctness_b": OK, "convert_layouts_a": 3,
            "convert_layouts_b": 1, "order_deltas_pct": {"AB": 8.0, "BA": 7.0}}
    return classify(Evidence(**{**base, **kw})).cls


def test_each_class_and_the_order_they_are_decided_in():
    assert cls() == "G"
    assert cls(order_deltas_pct={"AB": 8.0, "BA": 2.0}) == "C"  # not faster enough in one order
    assert cls(order_deltas_pct={"AB": 8.0, "BA": None}) == "C"  # one order never timed
    assert cls(convert_layouts_b=3) == "B"
    assert cls(order_deltas_pct={"AB": -4.0, "BA": -3.5}) == "R"
    assert cls(order_deltas_pct={"AB": -4.0, "BA": -1.0}) == "C"  # not stable: no R
    assert cls(correctness_b=WRONG) == "K"  # faster and wrong is K, never G
    assert cls(correctness_a=WRONG, correctness_b=WRONG) == "X"
    assert cls(correctness_b=Correctness(problem="no accuracy.xml")) == "X"
    assert cls(failure="side B timed out") == "X"
    assert cls(failure="side B timed out", correctness_b=WRONG) == "X"
    assert cls(convert_layouts_a=None) == "X"
    assert cls(unchanged="SWITCH_NO_IR_DIFF") == "B"
    assert cls(unchanged="SWITCH_NO_IR_DIFF", correctness_a=None, correctness_b=None) == "B"
    assert cls(unchanged="SWITCH_NO_IR_DIFF", correctness_b=WRONG) == "K"  # same TTGIR, other code
    assert cls(unchanged="SWITCH_NO_IR_DIFF", failure="side B timed out") == "X"
    assert cls(correctness_a=None, correctness_b=None) == "G"  # a provider without tests


def test_a_reaccounting_may_demote_but_never_promote():
    assert demotes("G", "C") and demotes("C", "B") and demotes("B", "X") and demotes("C", "C")
    assert not demotes("C", "G") and not demotes("B", "C") and not demotes("X", "B")


MANIFEST = sleepy_head("sleepy-classes", "the classes of a fake layout pass",
                       'control: {env: {FAKE_PHASES: "0"}}')
OPS = ("gconv", "cconv", "bconv", "rconv", "inputconv", "hiddenconv", "abs", "crash", "wrongconv",
       "brokenconv", "leakconv", "wrongsame")
EXPECTED = {"gconv": "G", "cconv": "C", "bconv": "B", "rconv": "R", "inputconv": "C",
            "hiddenconv": "B", "abs": "B", "crash": "X", "wrongconv": "K", "brokenconv": "X",
            "leakconv": "X", "wrongsame": "K"}


@pytest.fixture
def sealed(lanes_host, monkeypatch, tmp_path, capsys):
    import zl_core.plugins.host as host_module

    monkeypatch.setattr(host_module, "_HOST", lanes_host)
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "runs"))
    monkeypatch.setenv("ZL_FAKE_OPS", " ".join(OPS))
    monkeypatch.setenv("ZL_FAKE_SLEEP", "0.05")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(MANIFEST + "".join(f"  - op: {op}\n" for op in OPS))
    assert main(["freeze", str(manifest), "--out", str(tmp_path / "frozen")]) == 0
    # A campaign where a cell failed never exits 0: crash's cells die every time.
    assert main(["ab", "--manifest", str(tmp_path / "frozen"), "--telemetry-interval", "0"]) in (6,)
    capsys.readouterr()
    [campaign] = (tmp_path / "runs").glob("ab_*")
    return campaign


@pytest.mark.slow
def test_a_sealed_campaign_its_classes_and_their_reaccounting(sealed, tmp_path, capsys):
    """One campaign (it takes a while) for the three parts below."""
    accounted_into_classes(sealed)
    a_check_cut_short_adds_no_time(sealed, tmp_path)
    reaccounted_at_the_sealed_floor_and_above(sealed, tmp_path, capsys)
    reaccounting_never_writes_inside_a_run(sealed, tmp_path, capsys)


def accounted_into_classes(sealed):
    classes = json.loads((sealed / "classes.json").read_text())
    assert {c["op"]: c["class"] for c in classes["classes"]} == EXPECTED
    assert classes["rule"] == {"launch_floor": 0, "gain_pct": 5.0, "regression_pct": 3.0}
    why = {c["op"]: c["why"] for c in classes["classes"]}
    assert why["wrongconv"].startswith("correctness fails on side B only (3 of 4 failed; side A passes 4)")
    assert why["brokenconv"].startswith("side A's accuracy tests could not run: no accuracy.xml")
    assert why["leakconv"].startswith("the control side (the switch on, every phase it gates off)")
    assert why["crash"].startswith("no report: a cell failed")
    # Identical TTGIR stops the timing, not the checks: side B's code may still differ.
    assert why["abs"] == ("the switch left its TTGIR unchanged (skipped: SWITCH_NO_IR_DIFF: identical "
                          "TTGIR after round 1); tests pass on both sides (A 4, B 4)")
    assert why["wrongsame"].startswith("correctness fails on side B only (3 of 4 failed")
    wrong = next(c for c in classes["classes"] if c["op"] == "wrongconv")["evidence"]
    assert wrong["correctness_a"]["passed"] == 4 and wrong["correctness_b"]["failed"] == 3
    # Each side's tests ran once its rounds were done, in its own cell, receipted with the rest.
    receipt = json.loads((sealed / "receipt.json").read_text())
    assert {"wrongconv/check/A", "wrongconv/check/B", "gconv/r01/C"} <= set(receipt["cells"])
    gconv = next(c for c in classes["classes"] if c["op"] == "gconv")
    assert gconv["evidence"]["convert_layouts_a"] == 3 and gconv["evidence"]["convert_layouts_b"] == 1
    assert all(v > 5 for v in gconv["evidence"]["order_deltas_pct"].values())
    receipt = json.loads((sealed / "receipt.json").read_text())
    assert "classes.json" in receipt["tables"] and receipt["rules"] == RULES
    # The report shows them beside the verdicts, in every form, and its model keeps its schema.
    import jsonschema
    from zl_core.report.dispatch import build
    from zl_report import render

    model = build(sealed)
    assert {c["op"]: c["class"] for c in model["summary"]["classes"]["classes"]} == EXPECTED
    tests = {c["op"]: c["correctness"] for c in model["summary"]["classes"]["classes"]}
    assert tests["wrongsame"]["B"] == {"passed": 1, "failed": 3, "skipped": 0, "problem": ""}
    assert tests["crash"] == {"A": None, "B": None}
    schema = json.loads((Path(__file__).resolve().parents[1] / "packages/zl-core/src/zl_core/schemas/"
                         "report.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(model, default=str)), schema)
    for fmt in ("text", "md", "html"):
        out = render(model, fmt)
        assert "Classes (sealed campaign)" in out and "rconv" in out, fmt
        assert "3 of 4 failed" in out and "4 passed" in out and "could not run" in out, fmt
    # The checks' device time is counted apart from the rounds' cells, never dropped.
    checked = [caliber.read_identity(d)[phases.KEY] for d in sorted(sealed.glob("*/check/[AB]"))
               if (d / caliber.IDENTITY_NAME).is_file()]
    spent = model["summary"]["time_spent"]
    assert len(checked) >= 2 * 8 and spent["checks"]["cells"] == len(checked)
    assert spent["checks"]["wall_s"] == pytest.approx(sum(r["wall_s"] for r in checked), abs=0.01)
    assert spent["cells"] == len(latest_by_cell(read_status(sealed)))  # the rounds' cells alone
    assert set(spent["checks"]["by_side"]) == {"A", "B"}
    text = render(model, "text")
    assert "the accuracy checks took" in text
    answer = text.split("\nVerdicts\n--------\n")[1]  # the answer, last in the terminal
    assert "accuracy checks: " in answer.split("\n\n")[0]  # its cards, beside the device time
    assert not (sealed / "classes.json").stat().st_mode & 0o222  # sealed


def a_check_cut_short_adds_no_time(sealed, tmp_path):
    # A check running when the campaign was killed has its first identity, no end stamp
    # and no report: it is not counted, as a finished one is (stalled ones included).
    import shutil

    from zl_core.report.time_spent import time_spent
    from zl_core.store.layout import CampaignLayout

    copy = tmp_path / "cut-short"
    shutil.copytree(sealed, copy)
    before = time_spent(CampaignLayout(copy))["checks"]
    cell = copy / "gconv" / "check" / "A"
    for path in [cell, *cell.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    identity = caliber.read_identity(cell).to_json()  # a copy to edit
    identity.pop("finished")
    caliber.write_identity(cell, identity)
    (cell / "accuracy.xml").unlink()
    after = time_spent(CampaignLayout(copy))["checks"]
    assert after["cells"] == before["cells"] - 1 and after["cells_without_phases"] == 0


def reaccounted_at_the_sealed_floor_and_above(sealed, tmp_path, capsys):
    assert main(["reaccount", str(sealed), "--out", str(tmp_path / "same"), "--launch-floor", "0"]) == 0
    same = json.loads((tmp_path / "same" / "classes.json").read_text())
    assert {c["op"]: c["class"] for c in same["classes"]} == EXPECTED and same["changes"] == []
    assert "no class changed" in capsys.readouterr().out

    assert main(["reaccount", str(sealed), "--out", str(tmp_path / "floor4"), "--launch-floor", "4"]) == 0
    out = capsys.readouterr().out
    derived = json.loads((tmp_path / "floor4" / "classes.json").read_text())
    classes = {c["op"]: c["class"] for c in derived["classes"]}
    # inputconv's conversions were in its input kernel (2 launches): demoted C -> B.
    assert classes["inputconv"] == "B" and "inputconv: C -> B" in out
    # hiddenconv would rise B -> G once its input kernel is left out: refused, it stays B.
    assert classes["hiddenconv"] == "B" and "hiddenconv: B -> G (promotion refused: stays)" in out
    assert {k: v for k, v in classes.items() if k not in ("inputconv", "hiddenconv")} == \
        {k: v for k, v in EXPECTED.items() if k not in ("inputconv", "hiddenconv")}
    receipt = json.loads((tmp_path / "floor4" / "receipt.json").read_text())
    assert receipt["reaccounts"] == str(sealed) and receipt["rule"]["launch_floor"] == 4
    # Every receipt follows the shipped schema: the campaign's, each cell's, the re-accounting's.
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[1] / "packages/zl-core/src/zl_core/schemas/"
                         "receipt.schema.json").read_text())
    receipts = [receipt, *(json.loads(p.read_text()) for p in sealed.rglob("receipt.json"))]
    assert len(receipts) > 20
    for doc in receipts:
        jsonschema.validate(doc, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**receipt, "changes": [{"op": "x", "sealed": "C"}]}, schema)
    assert {c["op"]: (c["sealed"], c["taken"]) for c in receipt["changes"]} == \
        {"inputconv": ("C", "B"), "hiddenconv": ("B", "B")}


def reaccounting_never_writes_inside_a_run(sealed, tmp_path, capsys):
    before = sorted(p.relative_to(sealed).as_posix() for p in sealed.rglob("*"))
    assert main(["reaccount", str(sealed), "--out", str(sealed / "derived")]) == 2
    assert "lies inside campaign" in capsys.readouterr().err
    assert sorted(p.relative_to(sealed).as_posix() for p in sealed.rglob("*")) == before
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("")
    assert main(["reaccount", str(sealed), "--out", str(tmp_path / "used")]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    # A campaign without a receipt, or whose files changed since it, is refused.
    plain = tmp_path / "runs" / "plain"
    plain.mkdir()
    (plain / "campaign.json").write_text("{}")
    assert main(["reaccount", str(plain), "--out", str(tmp_path / "p")]) == 2
    assert "has no campaign receipt" in capsys.readouterr().err
    status = sealed / "status.tsv"
    status.chmod(0o644)
    status.write_text(status.read_text() + "\n")
    assert main(["reaccount", str(sealed), "--out", str(tmp_path / "q")]) == 2
    assert "status.tsv changed" in capsys.readouterr().err


def test_the_manifest_sets_the_class_thresholds(tmp_path):
    from zl_core.seal.manifest import load_manifest

    path = tmp_path / "m.yaml"
    path.write_text(MANIFEST.replace("launch_floor: 0", "launch_floor: 0\ngain_pct: 10\nregression_pct: 2")
                    + "  - op: gconv\n")
    manifest = load_manifest(path)
    assert manifest.gain_pct == 10.0 and manifest.regression_pct == 2.0
    path.write_text(textwrap.dedent(MANIFEST).replace("launch_floor: 0", "launch_floor: -1\ngain_pct: 0")
                    + "  - op: gconv\n")
    with pytest.raises(Exception) as info:
        load_manifest(path)
    problems = getattr(info.value, "problems", ())
    assert any(p.startswith("launch_floor:") for p in problems) and any(p.startswith("gain_pct:") for p in problems)
