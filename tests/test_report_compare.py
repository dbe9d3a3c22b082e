"""``zl compare``: one report across A/B campaigns of the same operators. On the kept H200
and H100 campaigns of bmm and addmm (two cards, one switch) in every format, validated by
the shipped schema; disagreement and what makes a claim incomparable on synthetic models."""

from __future__ import annotations

import copy
import html
import json
import re
import tarfile
from pathlib import Path

import pytest
from report_helpers import zl
from synthetic_report import rounds_model
from zl_core.report.compare import build_compare
from zl_core.report.dispatch import build
from zl_report.compare import ordered

jsonschema = pytest.importorskip("jsonschema")
zl_report = pytest.importorskip("zl_report")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "validation" / "data"
H200 = DATA / "2026-12-03-ab-bmm-addmm.tgz"
H100 = DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz"
SCHEMA = json.loads((ROOT / "packages" / "zl-core" / "src" / "zl_core" / "schemas" / "report.schema.json")
                    .read_text(encoding="utf-8"))


def _errors(model: dict) -> list[str]:
    model = json.loads(json.dumps(model))
    return ["/".join(map(str, e.absolute_path)) + ": " + e.message[:160]
            for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(model)]


def campaign_of(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (meta,) = [p for p in into.rglob("campaign.json") if p.parent.name.startswith("ab_")]
    return meta.parent


@pytest.fixture(scope="module")
def two_cards(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    return campaign_of(H200, root / "h200"), campaign_of(H100, root / "h100")


@pytest.fixture(scope="module")
def compared(two_cards, tmp_path_factory) -> dict:
    """``zl compare H200 H100 --json``, run once."""
    out = tmp_path_factory.mktemp("json") / "compare.json"
    assert zl(["compare", *two_cards, "--json", "--out", out]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_h200_and_h100_campaigns_compare_in_json_valid_under_the_schema(two_cards, compared):
    model = compared
    assert model["kind"] == "compare" and not _errors(model), _errors(model)[:3]
    assert "device" in model["conditions"]["differ"] and "switch" in model["conditions"]["same"]
    assert [c["label"] for c in model["campaigns"]] == ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
    ops = {o["op"]: o for o in model["operators"]}
    assert {"bmm", "addmm"} <= set(ops)
    for index, campaign in enumerate(two_cards):  # each campaign as zl report judges it
        own = {o["op"]: o for o in build(campaign)["summary"]["operators"]}
        for op in ("bmm", "addmm"):
            entry = ops[op]["entries"][index]
            assert entry["status"] == "judged" and entry["verdict"] == own[op]["verdict"]
            assert entry["estimate"] == own[op]["estimate"]
    assert ops["addmm"]["agreement"] == "agree"  # SLOWER on both cards
    assert ops["mm"]["agreement"] == "single" and "not in this campaign" in ops["mm"]["incomparable"][0]


def test_the_comparison_renders_in_every_format(two_cards, compared, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # a cell whole on its line (80 columns: test_report_terminal_width)
    model = compared
    assert zl(["compare", *two_cards, "--format", "html", "--out", tmp_path / "compare.html"]) == 0
    for fmt in ("text", "md", "html"):
        if fmt != "html":
            (tmp_path / f"compare.{fmt}").write_text(zl_report.render(model, fmt), encoding="utf-8")
        page = (tmp_path / f"compare.{fmt}").read_text(encoding="utf-8")
        flat = " ".join(page.split())
        for c in model["campaigns"]:
            assert (html.escape(c["label"]) if fmt == "html" else c["label"]) in page, fmt
        for op in model["operators"]:
            for entry in op["entries"]:
                est = entry["estimate"]
                if est:
                    shown = f"{entry['verdict']} {zl_report.layout.pct(est['estimate_pct'])}"
                    interval = zl_report.layout.span(est["ci_low_pct"], est["ci_high_pct"])
                    if fmt == "html":
                        interval = interval.replace(" .. ", "\u00a0.. ")
                    hay = page if fmt == "html" else flat  # split() would take the page's no-break spaces
                    assert shown in hay and interval in hay, (fmt, op["op"])
        assert "Verdicts across campaigns" in page
    md = (tmp_path / "compare.md").read_text(encoding="utf-8")
    assert md.startswith(f"# {model['title']}\n\n## Verdicts across campaigns")
    assert "| operator | NVIDIA H200 | NVIDIA H100 80GB HBM3 | IR | across campaigns |" in md


def _pair(n_ops: int = 3) -> tuple[dict, dict]:
    a = rounds_model(n_ops)
    b = copy.deepcopy(a)
    for model, device in ((a, "MUSA S4000"), (b, "NVIDIA H100 80GB HBM3")):
        model["summary"]["provenance"] = {**model["summary"]["provenance"], "devices": [device]}
    return a, b


def test_campaigns_that_disagree_come_first_and_the_disagreement_is_said():
    a, b = _pair()
    op = b["summary"]["operators"][2]  # NO_CHANGE in both ... until B says SLOWER
    assert op["verdict"] == "NO_CHANGE"
    op["verdict"] = "SLOWER"
    model = build_compare([a, b], ["musa", "cuda"])
    assert not _errors(model), _errors(model)[:3]
    assert model["conditions"]["differ"] == ["device"]
    ops = {o["op"]: o for o in model["operators"]}
    assert ops[op["op"]]["agreement"] == "disagree"
    assert ops[op["op"]]["text"] == "NO_CHANGE on MUSA S4000; SLOWER on NVIDIA H100 80GB HBM3"
    for fmt in ("text", "md", "html"):
        out = zl_report.render(model, fmt)
        first = out.index(op["op"])
        assert all(first < out.index(other) for other in ops if other != op["op"]), fmt
        assert "disagree" in out


def test_what_makes_a_claim_incomparable_is_said_at_that_operator(monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")  # the words, not how 80 columns wrap them (test_report_terminal_width)
    a, b = _pair()
    first, second = (o["op"] for o in a["summary"]["operators"][:2])
    b["summary"]["operators"] = [o for o in b["summary"]["operators"] if o["op"] != second]
    b["rows"] = [r for r in b["rows"] if r["op"] != second]
    next(o for o in b["summary"]["operators"] if o["op"] == first)["timer"] = "direct"
    b["rows"] = [r for r in b["rows"] if not (r["op"] == first and r["shape"].startswith("float16 [torch.Size([64,"))]
    model = build_compare([a, b], ["musa", "cuda"])
    assert not _errors(model), _errors(model)[:3]
    ops = {o["op"]: o for o in model["operators"]}
    said = "; ".join(ops[first]["incomparable"])
    assert "timers differ (graph on MUSA S4000, direct on NVIDIA H100 80GB HBM3)" in said
    assert "shapes differ (5 on MUSA S4000, 4 on NVIDIA H100 80GB HBM3; 4 in common)" in said
    assert ops[second]["agreement"] == "single"
    assert "no verdict on NVIDIA H100 80GB HBM3 (not in this campaign)" in ops[second]["incomparable"]
    text = " ".join(zl_report.render(model, "text").split())
    assert "timers differ" in text and "shapes differ" in text


def test_campaigns_with_the_same_conditions_are_told_apart_by_their_folders():
    a, b = rounds_model(2), rounds_model(2)
    model = build_compare([a, b], ["ab_X_1", "ab_X_2"])
    assert model["conditions"]["differ"] == []
    labels = [c["label"] for c in model["campaigns"]]
    assert len(set(labels)) == 2 and "ab_X_1" in labels[0]


def test_zl_compare_refuses_one_campaign_and_a_screen(two_cards, tmp_path, capsys):
    assert zl(["compare", two_cards[0]]) == 2
    assert "two or more" in capsys.readouterr().err
    assert zl(["compare", two_cards[0], two_cards[0]]) == 2
    assert "given twice" in capsys.readouterr().err
    screen = tmp_path / "screen"
    with tarfile.open(DATA / "2026-12-05-two-sources" / "campaign.tgz") as tar:
        tar.extractall(screen, filter="data")
    assert zl(["compare", two_cards[0], next(screen.glob("screen_*"))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a screen" in err[0]



@pytest.mark.slow
def test_a_comparison_over_the_comment_limit_names_the_operators_it_has_no_row_for():
    a, b = _pair(1000)
    model = build_compare([a, b], ["musa", "cuda"])
    md = zl_report.render(model, "md")
    assert len(zl_report.render(model, "md", limit=10**9)) > 65_536 >= len(md)  # the cut is real
    rows = [line.split(" | ")[0].strip("| ") for line in md.splitlines() if re.match(r"\| op\d{4} \|", line)]
    named = " ".join(line for line in md.splitlines() if line.startswith("_no row here, to fit a comment"))
    assert rows and named and all(op["op"] in rows or op["op"] in named for op in model["operators"])
    assert rows == [o["op"] for o in ordered(model["operators"])][: len(rows)]  # disagreements first
