"""Rendering report models: JSON schema, self-contained HTML, Markdown, and the fallback text."""

from __future__ import annotations

import json
import re
import sys

import pytest
from report_helpers import IDENTITY, zl
from zl_core.report import build_pair

TOP_KEYS = {"schema", "kind", "title", "caliber", "caliber_problems", "caliber_warnings", "rows",
            "summary", "notes"}
ROW_KEYS = {"op", "dtype", "size_detail", "occurrence", "shape", "class", "reason", "a_latency_ms",
            "b_latency_ms", "delta_pct", "a_timer", "b_timer", "a_fallback", "b_fallback",
            "a_status", "b_status", "a_speedup", "b_speedup"}




@pytest.fixture
def cells(tmp_path):
    out = []
    for side, ms in (("A", [1.1, 2.0, 0.0]), ("B", [1.0, 2.2, 1.0])):
        d = tmp_path / side
        d.mkdir()
        mode = "record" if side == "A" else "replay"
        (d / "run_identity.json").write_text(json.dumps({**IDENTITY, "autotune_mode": mode}))
        rows = [{"op": "mm", "dtype": "float16", "size_detail": f"[{2 ** i}] <b>&", "status":
                 "SUCCESS" if v else "FAILED", "torch_latency_ms": 1.0, "gems_latency_ms": v or None,
                 "speedup": 1.0, "timer": "graph", "fallback": False, "error": None}
                for i, v in enumerate(ms)]
        (d / "results.json").write_text(json.dumps({"schema": 1, "rows": rows}))
        out.append(d)
    return out


def _no_nan(text):
    raise AssertionError(f"non-standard JSON constant {text}")


def test_json_form_has_the_documented_keys_and_is_strict_json(cells, capsys):
    assert zl(["report", "--ab", *cells, "--json"]) == 0
    model = json.loads(capsys.readouterr().out, parse_constant=_no_nan)
    assert set(model) == TOP_KEYS
    assert model["schema"] == 2 and model["kind"] == "pair"
    assert set(model["caliber"]) == {"fields", "common", "differs", "cells"}
    assert set(model["caliber"]["cells"]) == {"A", "B"}
    assert all(set(r) == ROW_KEYS for r in model["rows"])
    assert {"counts", "comparable", "fallback", "verdict"} <= set(model["summary"])
    assert [r["class"] for r in model["rows"]] == ["ok", "ok", "failed"]


def test_format_json_equals_json_flag(cells, capsys):
    zl(["report", "--ab", *cells, "--json"])
    a = capsys.readouterr().out
    zl(["report", "--ab", *cells, "--format", "json"])
    assert json.loads(capsys.readouterr().out) == json.loads(a)


def test_html_is_self_contained_with_inline_svg(cells, tmp_path):
    out = tmp_path / "r.html"
    assert zl(["report", "--ab", *cells, "--format", "html", "--out", out]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<style>" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert "@import" not in page and "url(" not in page
    # user text is escaped, never markup
    assert "<b>&" not in page and "&lt;b&gt;&amp;" in page


def test_markdown_has_a_pipe_table(cells, capsys):
    assert zl(["report", "--ab", *cells, "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# A/B pair mm")
    assert "| shape | A | B | B vs A | delta |" in out and "|:---|---:|" in out


def test_core_renders_plain_text_without_zl_report(cells, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "zl_report", None)  # as if not installed
    assert zl(["report", "--ab", *cells]) == 0
    assert "+10.00%" in capsys.readouterr().out
    assert zl(["report", "--ab", *cells, "--format", "html"]) == 2
    assert "pip install zl-report" in capsys.readouterr().err


def test_zl_core_does_not_import_zl_report_at_import():
    code = ("import sys, zl_core.report, zl_core.cli.report, zl_core.interface.rows, zl_core.decisions.pairing; "
            "print('zl_report' in sys.modules)")
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_render_api_rejects_unknown_format(cells):
    zl_report = pytest.importorskip("zl_report")
    with pytest.raises(ValueError):
        zl_report.render(build_pair(*cells), "pdf")
    assert zl_report.render(build_pair(*cells), "text").startswith("A/B pair mm")


def test_json_and_format_conflict_is_a_usage_error(cells, capsys):
    assert zl(["report", "--ab", *cells, "--json", "--format", "md"]) == 2
    assert "--json" in capsys.readouterr().err


def test_colour_text_keeps_bracketed_size_details(cells, monkeypatch):
    """rich must not read "[torch.Size(...)]" as markup and swallow it."""
    pytest.importorskip("rich")
    # A width wide enough for the long tmp paths of a pytest-xdist worker: a wrapped cell
    # would split the size detail and hide what this test is about.
    monkeypatch.setenv("COLUMNS", "400")
    zl_report = pytest.importorskip("zl_report")
    for d in cells:
        data = json.loads((d / "results.json").read_text())
        data["rows"][0]["size_detail"] = "[torch.Size([64, 64]), 1]"
        (d / "results.json").write_text(json.dumps(data))
    text = zl_report.render(build_pair(*cells), "text", color=True)
    assert "\x1b[" in text
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "64x64, 1" in plain  # the table's short form of the shape
    # Bracketed text kept as it is wherever it is printed whole.
    from zl_report.blocks import Document, Para
    from zl_report.text import render_text

    doc = Document(title="t", blocks=(Para(text="[torch.Size([64, 64]), 1]"),))
    plain = re.sub(r"\x1b\[[0-9;]*m", "", render_text(doc, color=True))
    assert "[torch.Size([64, 64]), 1]" in plain


def test_a_report_is_never_written_inside_a_campaign(tmp_path, capsys):
    """--out inside a campaign folder could replace campaign.json or a cell's files."""
    campaign = tmp_path / "runs" / "screen_X_20261205-000000"
    (campaign / "mm" / "A").mkdir(parents=True)
    meta = {"schema": 1, "kind": "screen", "switch": "X", "a_value": "0", "b_value": "1",
            "a_env": {}, "b_env": {}, "backend": "cuda", "device": "0", "suite": "builtin",
            "ops": ["mm"], "created": "20261205-000000", "state": "complete"}
    (campaign / "campaign.json").write_text(json.dumps(meta))
    before = (campaign / "campaign.json").read_bytes()
    for out in (campaign / "campaign.json", campaign / "report.html", campaign / "mm" / "A" / "x.md",
                campaign):
        assert zl(["report", str(campaign), "--format", "html", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "lies inside campaign" in err[0] and str(campaign) in err[0]
    assert (campaign / "campaign.json").read_bytes() == before
    assert sorted(p.name for p in campaign.iterdir()) == ["campaign.json", "mm"]
