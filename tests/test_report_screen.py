"""``zl report`` on a screen campaign: IR verdicts, and a delta range only where it means something."""

from __future__ import annotations

import json
import re

import pytest
from report_helpers import IDENTITY, zl
from zl_core.interface.caliber import ALL_FIELDS
from zl_core.report import build


def write_cell(d, side, rows, identity=None):
    d.mkdir(parents=True)
    ident = {**IDENTITY, "autotune_mode": "record" if side == "A" else "replay",
             **(identity or {})}
    (d / "run_identity.json").write_text(json.dumps(ident))
    if rows is not None:
        (d / "results.json").write_text(json.dumps({"schema": 1, "rows": [
            {"op": "x", "dtype": "float16", "size_detail": s, "torch_latency_ms": 1.0,
             "gems_latency_ms": ms, "speedup": 1.0, "status": "SUCCESS", "timer": "graph",
             "fallback": False, "error": None} for s, ms in rows]}))


def make_screen(root, ops, *, compile_only=False, b_identity=None):
    """ops: op -> (verdict, A rows, B rows); rows None = no results at all."""
    root.mkdir(parents=True)
    (root / "campaign.json").write_text(json.dumps({
        "schema": 1, "kind": "screen", "switch": "DISABLE_MMA_V3", "a_value": "0", "b_value": "1",
        "a_env": {"DISABLE_MMA_V3": "0"}, "b_env": {"DISABLE_MMA_V3": "1"}, "backend": "cuda",
        "ops": list(ops), "compile_only": compile_only,
        "target": "cuda:90" if compile_only else None}))
    entries = []
    for op, (verdict, a_rows, b_rows) in ops.items():
        extra = {"compile_only": True, "target": "cuda:90"} if compile_only else {}
        write_cell(root / op / "A", "A", a_rows, extra)
        write_cell(root / op / "B", "B", b_rows, {**extra, **(b_identity or {})})
        entries.append({
            "op": op, "op_file": op, "dtypes": "", "verdict": verdict,
            "rows_a": len(a_rows or []), "rows_b": len(b_rows or []), "kernels_a": 3,
            "kernels_b": 3, "convert_layouts_a": 12, "convert_layouts_b": 9,
            "ttgir_files_a": 3, "ttgir_files_b": 3, "fingerprint_a": "aa", "fingerprint_b": "bb",
            "elapsed_a": "10.0", "elapsed_b": "9.0", "timed_out": int(verdict == "TIMEOUT"),
            "notes": "", **{f: IDENTITY.get(f, "") for f in ALL_FIELDS}})
    (root / "screen.json").write_text(json.dumps({"schema": 1, "ops": entries}))
    return root


ROWS_A = [("[64]", 1.10), ("[4096]", 2.0)]
ROWS_B = [("[64]", 1.00), ("[4096]", 2.1)]
QUIET_A = [("[64]", 1.000), ("[4096]", 2.000)]
QUIET_B = [("[64]", 1.002), ("[4096]", 1.996)]


@pytest.fixture
def screen(tmp_path):
    return make_screen(tmp_path / "screen_DISABLE_MMA_V3_20261202-093000", {
        "mm": ("IR_CHANGED", ROWS_A, ROWS_B),
        "softmax": ("NO_IR_DIFF", QUIET_A, QUIET_B),
        "embedding": ("NO_TRITON", ROWS_A, ROWS_B),  # rows, but nothing reached Triton
        "fft": ("NO_ROWS", [], []),
        "sort": ("TIMEOUT", None, None),
    })


def test_delta_range_only_for_ir_changed_and_no_ir_diff(screen):
    model = build(screen)
    rows = {r["op"]: r for r in model["rows"]}
    assert rows["mm"]["delta"]["label"] == "A/B delta (one pair)"
    assert rows["mm"]["delta"]["min_pct"] == pytest.approx(-4.7619, abs=1e-3)
    assert rows["mm"]["delta"]["max_pct"] == pytest.approx(10.0)
    assert rows["softmax"]["delta"]["label"] == "noise floor"
    for op in ("embedding", "fft", "sort"):
        assert rows[op]["delta"] is None, op
    assert rows["mm"]["convert_layouts_a"] == 12 and rows["mm"]["kernels_b"] == 3
    assert model["summary"]["counts"]["IR_CHANGED"] == 1
    assert model["summary"]["ir_changed"] == ["mm"]


def test_text_prints_ranges_by_verdict(screen, capsys):
    assert zl(["report", screen]) == 0
    lines = capsys.readouterr().out.splitlines()

    def line(op):
        return next(ln for ln in lines if ln.startswith(op + " "))

    assert "A/B delta (one pair): -4.76% .. +10.00%" in line("mm")
    assert "noise floor: -0.20% .. +0.20%" in line("softmax")
    for op in ("embedding", "fft", "sort"):
        assert not re.search(r"\d%", line(op)), line(op)


def test_ir_only_screen_says_so_and_prints_no_latencies(tmp_path, capsys):
    root = make_screen(tmp_path / "s", {"mm": ("IR_CHANGED", ROWS_A, ROWS_B),
                                        "add": ("NO_IR_DIFF", QUIET_A, QUIET_B)},
                       compile_only=True)
    model = build(root)
    assert all(r["delta"] is None for r in model["rows"])
    assert any("IR-only" in n for n in model["notes"])
    assert zl(["report", root]) == 0
    out = capsys.readouterr().out
    assert "IR-only" in out and not re.search(r"\d%", out)
    # zl ab refuses an IR-only screen, so the report must not send the user there.
    assert "next: A/B rounds" not in out
    assert "next: the IR of mm changed for cuda:90; to time it, screen them on a device" in out


def test_a_device_screen_points_to_ab_rounds(screen, capsys):
    assert zl(["report", screen]) == 0
    assert "next: A/B rounds for mm (zl ab takes the IR_CHANGED operators" in capsys.readouterr().out


def test_screen_caliber_mismatch_refuses(tmp_path, capsys):
    root = make_screen(tmp_path / "s", {"mm": ("IR_CHANGED", ROWS_A, ROWS_B)},
                       b_identity={"bench_level": "comprehensive"})
    assert zl(["report", root]) == 4
    out, err = capsys.readouterr()
    assert out == "" and "bench_level" in err and "mm A=core" in err
    assert zl(["report", root, "--allow-caliber-mismatch"]) == 0


def test_screen_has_no_gate_verdicts(screen, capsys):
    assert zl(["report", screen, "--fail-on", "any"]) == 0
    assert "nothing to gate" in capsys.readouterr().err


def test_unknown_campaign_kind_and_corrupt_campaign(tmp_path, capsys):
    (tmp_path / "campaign.json").write_text(json.dumps({"kind": "weird"}))
    assert zl(["report", tmp_path]) == 2
    (tmp_path / "campaign.json").write_text("{")
    assert zl(["report", tmp_path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "unknown kind" in err[0] and "campaign.json" in err[1]
