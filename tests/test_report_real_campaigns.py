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
    (meta,) = [p for p in tmp_path.rglob("campaign.json") if p.parent.name.startswith(("ab_", "aa_"))]
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
        assert out.count("INCONCLUSIVE:") >= len(undecided), fmt
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
def test_every_shape_shows_its_latencies_and_the_speedup_its_interval_belongs_to(tmp_path, archive):
    """A/B latencies in ms (the median of rounds) and B's speedup, the estimate's own ratio."""
    model = build(campaign_of(archive, tmp_path), allow_mismatch=True)
    text = render(model, "text")
    for row in (r for r in model["rows"] if r.get("stats")):
        est = zl_layout.interval_estimate(row["stats"])
        if est is not None:
            assert f"{1 + est / 100:.3f}x" in text, row["shape"]
    assert "A ms" in text and "B ms" in text and "speedup" in text
