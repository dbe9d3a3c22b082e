"""``zl report --ab A_DIR B_DIR``: caliber first, then per-shape deltas of one pair."""

from __future__ import annotations

import json

import pytest
from report_helpers import IDENTITY, zl
from zl_core.report import build_pair


def cell(path, rows, **identity):
    path.mkdir(parents=True)
    ident = {**IDENTITY, "autotune_mode": "replay", "replay_source": "A", **identity}
    (path / "run_identity.json").write_text(json.dumps(ident))
    (path / "results.json").write_text(json.dumps({
        "schema": 1, "op": "mm",
        "rows": [{"op": "mm", "dtype": "float16", "size_detail": size, "torch_latency_ms": 1.0,
                  "gems_latency_ms": ms, "speedup": 1.0 / ms, "status": "SUCCESS",
                  "timer": "direct" if fb else identity.get("timer", "graph"),
                  "fallback": fb, "error": None} for size, ms, fb in rows],
        "markers": {}}))
    return path


def pair(tmp_path, a_identity=None, b_identity=None):
    a = cell(tmp_path / "A", [("[64]", 1.10, False), ("[128]", 2.0, False), ("[256]", 3.0, True)],
             **{"autotune_mode": "record", **(a_identity or {})})
    b = cell(tmp_path / "B", [("[64]", 1.00, False), ("[128]", 2.5, False), ("[256]", 1.0, True)],
             **(b_identity or {}))
    return a, b


def test_timer_mismatch_is_refused_with_exit_4_naming_the_field(tmp_path, capsys):
    a, b = pair(tmp_path, b_identity={"timer": "direct"})
    assert zl(["report", "--ab", a, b]) == 4
    out, err = capsys.readouterr()
    assert out == ""  # no report at all
    lines = [ln for ln in err.splitlines() if "timer" in ln]
    assert lines and "graph" in lines[0] and "direct" in lines[0]


@pytest.mark.parametrize("a_budget,shown", [({"replay_ms": 30.0}, "A=30.0 B=100.0"),
                                             ({}, "A=rep/10 B=100.0")])
def test_a_different_replay_budget_is_refused(tmp_path, capsys, a_budget, shown):
    # Cells written before the budget existed shared rep across their ten replays.
    a, b = pair(tmp_path, a_identity=a_budget, b_identity={"replay_ms": 100.0})
    assert zl(["report", "--ab", a, b]) == 4
    err = capsys.readouterr().err
    assert f"caliber field 'replay_ms' differs: {shown}" in err


def test_record_vs_record_is_refused_by_name(tmp_path, capsys):
    a, b = pair(tmp_path, b_identity={"autotune_mode": "record"})
    assert zl(["report", "--ab", a, b]) == 4
    assert "record vs record" in capsys.readouterr().err


def test_missing_identity_is_refused(tmp_path, capsys):
    a, b = pair(tmp_path)
    (b / "run_identity.json").unlink()
    assert zl(["report", "--ab", a, b]) == 4
    assert "B: no run_identity.json" in capsys.readouterr().err


def test_allow_caliber_mismatch_reports_and_still_prints_problems(tmp_path, capsys):
    a, b = pair(tmp_path, b_identity={"timer": "direct"})
    assert zl(["report", "--ab", a, b, "--allow-caliber-mismatch", "--json"]) == 0
    out, err = capsys.readouterr()
    model = json.loads(out)
    assert any("timer" in p for p in model["caliber_problems"])
    assert "timer" in err and "caliber" in err
    assert "timer" in model["caliber"]["differs"]


def test_pair_rows_deltas_and_fallback_kept_apart(tmp_path):
    a, b = pair(tmp_path)
    model = build_pair(a, b)
    rows = {r["size_detail"]: r for r in model["rows"]}
    assert rows["[64]"]["delta_pct"] == pytest.approx(10.0)
    assert rows["[128]"]["delta_pct"] == pytest.approx(-20.0)
    assert rows["[256]"]["class"] == "fallback" and rows["[256]"]["b_fallback"] is True
    comparable = model["summary"]["comparable"]
    assert comparable["n"] == 2  # the fallback row (+200%) is not pooled
    assert comparable["max_pct"] == pytest.approx(10.0)
    assert model["summary"]["fallback"]["n"] == 1
    assert model["summary"]["verdict"] is None
    assert model["caliber"]["common"]["timer"] == "graph"


def test_pair_text_report_shows_deltas(tmp_path, capsys):
    a, b = pair(tmp_path)
    assert zl(["report", "--ab", a, b]) == 0
    out = capsys.readouterr().out
    assert "+10.00%" in out and "-20.00%" in out and "positive = B faster" in out


def test_fail_on_with_a_pair_never_trips_and_says_why(tmp_path, capsys):
    a, b = pair(tmp_path)
    assert zl(["report", "--ab", a, b, "--fail-on", "any"]) == 0
    assert "nothing to gate" in capsys.readouterr().err


def test_missing_path_is_one_line_exit_2(tmp_path, capsys):
    a, _ = pair(tmp_path)
    assert zl(["report", "--ab", a, tmp_path / "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nope" in err


def test_corrupt_results_json_exit_2_naming_the_file(tmp_path, capsys):
    a, b = pair(tmp_path)
    (b / "results.json").write_text("{not json")
    assert zl(["report", "--ab", a, b]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(b / "results.json") in err


def test_a_cell_dir_as_path_says_use_ab(tmp_path, capsys):
    a, _ = pair(tmp_path)
    assert zl(["report", a]) == 2
    assert "--ab" in capsys.readouterr().err


def test_log_only_cells_pair_through_the_printed_table(tmp_path, capsys):
    table = ("Operator: mm  Performance Test (dtype=torch.float16, mode=kernel,level=core)\n"
             "Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup"
             "          Size Detail\n" + "-" * 95 + "\n")
    for side, ms in (("A", "1.200000"), ("B", "1.000000")):
        d = tmp_path / side
        d.mkdir()
        mode = "record" if side == "A" else "replay"
        (d / "run_identity.json").write_text(json.dumps({**IDENTITY, "autotune_mode": mode}))
        (d / "run.log").write_text(table + f"SUCCESS{'0.5':>23}{ms:>20}{'0.5':>20}"
                                   "          [torch.Size([8, 8])]\n")
    model = build_pair(tmp_path / "A", tmp_path / "B")
    (row,) = model["rows"]
    assert row["class"] == "ok" and row["delta_pct"] == pytest.approx(20.0)
    assert model["summary"]["sources"] == {"A": "run.log", "B": "run.log"}
