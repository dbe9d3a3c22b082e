"""The reports of the real H200 campaigns kept in docs/validation/data, rendered as a user
gets them: every per-round delta drawn as a dot, and the table, the plot's marker and the
interval built around one estimate. A key the model renames fails here, not only in the
synthetic fixture."""

from __future__ import annotations

import html
import math
import re
import tarfile
from pathlib import Path

import pytest
from zl_core.report.dispatch import build
from zl_core.report.render import render

zl_layout = pytest.importorskip("zl_report.layout")
undecided_reason = zl_layout.undecided_reason

DATA = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data"
ARCHIVES = sorted(DATA.glob("2026-12-03-a[ab]-*.tgz"))

pytest.importorskip("zl_report")


def campaign_of(archive: Path, tmp_path: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    (meta,) = [p for p in tmp_path.rglob("campaign.json") if p.parent.name.startswith(("ab_", "aa_"))
               and p.parent.parent.name != "frozen"]
    return meta.parent


@pytest.mark.parametrize("archive", ARCHIVES, ids=[a.stem for a in ARCHIVES])
def test_every_round_is_a_dot_and_each_marker_is_its_intervals_estimate(archive, tmp_path):
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    rows = [r for r in model["rows"] if r.get("stats")]
    assert rows, "a rounds campaign with judged shapes"
    deltas = sum(1 for r in rows for d in r["stats"]["deltas_pct"]
                 if isinstance(d, int | float) and math.isfinite(d))
    html = render(model, "html")
    dots = sum(len(re.findall(r"M[-\d.]+ [-\d.]+h0", d))
               for d in re.findall(r'<path d="([^"]+)" stroke="[^"]+" stroke-width="5"', html))
    assert dots == deltas > 0
    text = render(model, "text")
    for r in rows:
        st = r["stats"]
        if isinstance(st.get("estimate_pct"), float) and st.get("ci_low_pct") is not None:
            assert st["ci_low_pct"] <= st["estimate_pct"] <= st["ci_high_pct"], r["shape"]
            assert f"{st['estimate_pct']:+.2f}%" in text  # the table shows the interval's estimate


@pytest.mark.parametrize("archive", ARCHIVES, ids=[a.stem for a in ARCHIVES])
def test_the_title_says_what_the_campaign_is_and_every_undecided_shape_says_why(archive, tmp_path):
    campaign = campaign_of(archive, tmp_path)
    model = build(campaign, allow_mismatch=True)
    kind = "A/A rounds (both sides side A's environment" if campaign.name.startswith("aa_") else "A/B rounds of "
    assert model["title"].startswith(kind) and "none" not in model["title"].split(":")[0]
    undecided = [r for r in model["rows"] if r.get("verdict") == "INCONCLUSIVE"]
    threshold = model["summary"].get("threshold_pct")
    for fmt in ("text", "html"):  # the Markdown form lists operators, not shapes
        out = render(model, fmt)
        assert out.count("INCONCLUSIVE") >= len(undecided), fmt
        flat = " ".join(out.split())  # the text form runs a reason on under its row
        for row in undecided:
            reason = row.get("reason") or undecided_reason(row["stats"], threshold)
            if fmt == "html":
                reason = html.escape(reason, quote=False)
            assert " ".join(reason.split()) in flat, (fmt, row["shape"])
    main = [r for r in undecided if r.get("segment", "main") == "main"]
    for fmt in ("text", "md", "html"):  # counted by reason in every format
        out = render(model, fmt)
        assert (f"undecided shapes: {len(main)} (" in out) == bool(main), fmt


@pytest.mark.parametrize("archive", ARCHIVES, ids=[a.stem for a in ARCHIVES])
def test_every_shape_shows_its_latencies_with_units_and_the_ratio_its_interval_belongs_to(tmp_path, archive):
    """A/B latencies scaled to ns, µs or ms (the median of rounds), and B against A in
    words, the estimate's own ratio (1.28x slower: B takes 1.28 times A's time)."""
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    text = render(model, "text")
    for row in (r for r in model["rows"] if r.get("stats")):
        est = zl_layout.interval_estimate(row["stats"])
        if est is not None:
            assert zl_layout.ratio(est) in text, row["shape"]
            assert re.fullmatch(r"\d\.\d\d\d?x (slower|faster)|same", zl_layout.ratio(est))
        for side in ("a_ms", "b_ms"):
            shown = zl_layout.median_latency(row[side])
            assert re.fullmatch(r"\d+(\.\d+)? (ns|\u00b5s|ms|s)", shown) and shown in text, (row["shape"], shown)
    assert "B vs A" in text and not re.search(r"\d\.\d{6}\b", text)  # no bare six-decimal ms


# --------------------------------------------------------------------------- the answer first
# Every rounds campaign kept in docs/validation/data, the sealed H100 one included.

KEPT = [*ARCHIVES, DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz",
        DATA / "2026-12-06-h100-sealed-partial" / "campaign-slim.tgz",
        DATA / "2026-12-06-h100-sealed-checks" / "campaign-slim.tgz",
        DATA / "2026-12-06-h200-sealed-attempt" / "campaign-slim.tgz",
        DATA / "2026-12-07-h100-aa-eight-rounds" / "campaign.tgz"]
KEPT_IDS = [a.stem if a.parent == DATA else a.parent.name for a in KEPT]


def _answer_row(out: str, op: dict, fmt: str) -> bool:
    """Whether one line (one table row) of ``out`` holds the operator, its verdict, and the
    estimate and interval the verdict was decided on."""
    est = op["estimate"]
    cells = [op["op"], op["verdict"], zl_layout.pct(est["estimate_pct"]),
             zl_layout.span(est["ci_low_pct"], est["ci_high_pct"])]
    if fmt == "html":
        cells = [html.escape(c).replace(" .. ", "\u00a0.. ") for c in cells]
    return any(all(c in line for c in cells) for line in out.splitlines())


@pytest.mark.parametrize("archive", KEPT, ids=KEPT_IDS)
def test_every_format_leads_with_each_verdicts_estimate_inside_its_interval(tmp_path, archive):
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    ops = model["summary"]["operators"]
    assert ops
    for op in ops:
        est = op["estimate"]
        if est is None:  # no interval yet: the operator is undecided
            assert op["verdict"] == "INCONCLUSIVE", op["op"]
            continue
        assert est["ci_low_pct"] <= est["estimate_pct"] <= est["ci_high_pct"], op["op"]
        if op["operator"]["mean"] and op["operator"]["mean"].get("look") is not None:
            assert est["estimate_pct"] == op["operator"]["mean"]["estimate_pct"]
        for fmt in ("text", "md", "html"):
            assert _answer_row(render(model, fmt), op, fmt), (fmt, op["op"])
    # The answer leads the Markdown and the page: before any operator's own section.
    for fmt, section in (("md", "\n## {}: "), ("html", '<h2 id="op-{}">')):
        out = render(model, fmt)
        first = min((out.find(section.format(o["op"])) for o in ops if section.format(o["op"]) in out),
                    default=len(out))
        assert out.find("Verdicts") < first, fmt
        # the median of medians is the model's, never beside the verdict
        assert "median of medians" not in out


@pytest.mark.parametrize("archive", KEPT, ids=KEPT_IDS)
def test_the_text_reports_last_lines_are_the_per_operator_summary(tmp_path, archive, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")  # a table's header on one line; 80 columns: test_report_terminal_width
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    ops = zl_layout.ordered_operators(model["summary"]["operators"])
    lines = [line for line in render(model, "text").splitlines() if line.strip()]
    header = max(i for i, line in enumerate(lines) if line.startswith("operator "))
    assert "Verdicts" in lines[header - 12:header]
    assert set(lines[header + 1]) <= {"-", " "}  # the table's rule, then its rows to the end
    rows = [line for line in lines[header + 2:] if not line.startswith(("(", " "))]
    assert len(rows) == len(ops)  # one row per operator (a wrapped name runs on below)
    for op, line in zip(ops, rows, strict=True):  # worst first
        assert line.split()[0] == op["op"] and op["verdict"] in line, (op["op"], line)


def test_the_sealed_campaigns_markdown_names_every_called_operator_with_its_interval(tmp_path):
    archive = DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz"
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    md = render(model, "md")
    assert len(md) <= 65_536
    # What a cut leaves out is detail (IR diffs first), never a verdict (docs/report-html.md).
    for line in md.splitlines():
        if "left out" in line:
            assert "every operator's verdict is in the table at the top" in line, line
    called = [o for o in model["summary"]["operators"] if o["verdict"] in ("SLOWER", "FASTER")]
    assert {o["op"] for o in called} >= {"mm", "bmm", "addmm"}
    for op in called:
        assert _answer_row(md, op, "md"), op["op"]
    # worst regression first
    rows = [line.split(" | ")[0].strip("| ") for line in md.splitlines()
            if line.startswith("| ") and " SLOWER " in line][: len(called)]
    assert rows == [o["op"] for o in sorted(called, key=lambda o: o["estimate"]["estimate_pct"])]
    # every format names where the numbers come from
    for fmt in ("text", "md", "html"):
        out = " ".join(render(model, fmt).split())
        assert "provider commit flaggems ed2508bcb5a0" in out and "driver 580.159.04" in out, fmt
        assert "2026-12-06T08:36:18Z" in out and "zl 0.1.0" in out, fmt


def test_the_ir_section_says_each_autotune_pick_once_per_kernel(tmp_path):
    """The sealed page repeated every raw autotune pick under each variant group of a kernel."""
    archive = DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz"
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    text = render(model, "text")
    for op in model["summary"]["operators"]:
        groups = [g for g in (op.get("ir") or {}).get("groups") or [] if g["change"]["status"] != "names_only"]
        for kernel in {g["kernel"] for g in groups}:
            picks = {c for g in groups if g["kernel"] == kernel for c in g.get("configs") or []}
            assert sum(len(g.get("configs") or []) for g in groups if g["kernel"] == kernel) > len(picks) or \
                len([g for g in groups if g["kernel"] == kernel]) == 1
            for pick in picks:
                assert " ".join(text.split()).count(f"autotune pick {pick}") == 1, (op["op"], pick)


def test_without_zl_report_the_plain_text_also_ends_with_each_verdict_and_its_interval(tmp_path):
    from zl_core.report.render import plain_text

    archive = DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz"
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    ops = model["summary"]["operators"]
    last = plain_text(model).splitlines()[-len(ops):]
    for op, line in zip(ops, last, strict=True):
        est = op["estimate"]
        assert line.startswith(f"{op['op']}: {op['verdict']} {est['estimate_pct']:+.2f}% "
                               f"[{est['ci_low_pct']:+.2f}%, {est['ci_high_pct']:+.2f}%]"), line
