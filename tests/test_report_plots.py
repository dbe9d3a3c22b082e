"""The HTML report's plots and folding, read from the page source (the browser checks the
drawn page: tests/test_report_browser.py): labels that fit and stay distinct, a legend of
the marks drawn, axes with units, and large campaigns folded in HTML only."""

from __future__ import annotations

import html
import re

import pytest
from synthetic_report import rounds_model, screen_model

zl_report = pytest.importorskip("zl_report")
from zl_report import layout
from zl_report.answer import ordered_operators
from zl_report.blocks import Plot, PlotItem, Timeline
from zl_report.svg import MAX_LABEL_W, fit_label, forest, text_width, timeline

LONG = [f"bfloat16 {'x'.join(['8192'] * 12)}, {'x'.join(['8192'] * 12)}x{n}" for n in (64, 128, 256)]


def test_a_label_cut_to_fit_keeps_both_ends_so_labels_stay_distinct():
    cut = [fit_label(label, 200) for label in LONG]
    assert len(set(cut)) == len(LONG)
    assert all("\u2026" in c and c.startswith("bfloat16") and text_width(c) <= 200 for c in cut)
    assert fit_label("float16 64x64", 200) == "float16 64x64"


def test_the_label_column_fits_the_longest_label_within_its_cap_and_titles_keep_it_whole():
    short = forest(Plot(title="t", items=(PlotItem(label="float16 64", mid=1.0),)))
    long = forest(Plot(title="t", items=tuple(PlotItem(label=label, mid=1.0) for label in LONG)))
    x_of = re.compile(r'<text class="label" x="([\d.]+)"')
    assert float(x_of.search(short)[1]) < 100 < float(x_of.search(long)[1]) <= MAX_LABEL_W
    for label in LONG:  # a label cut to fit is whole on hover
        assert f"<title>{label}</title>" in long
    assert "<title>float16 64</title>" not in short


def _legend(svg: str) -> list[str]:
    legend = svg.split('<g class="legend"')[1].split("</g>")[0]
    return [html.unescape(t) for t in re.findall(r"<text [^>]*>([^<]+)</text>", legend)]


def test_the_legend_names_only_the_marks_drawn_and_the_axis_its_unit_and_direction():
    rounds = forest(Plot(title="t", threshold=1.0, items=(
        PlotItem(label="a", points=(1.0, 2.0), low=0.5, high=2.5, mid=1.5, tone="good"),
        PlotItem(label="b", points=(0.1,), low=-1.0, high=1.0, mid=0.0, hollow=True))))
    assert _legend(rounds) == ["per-round delta", "confidence interval", "estimate",
                               "kept apart (fell back to direct timing)", "\u00b11% threshold",
                               "colour: the shape's verdict"]
    pair = forest(Plot(title="t", point_label="", mid_label="delta of the shape",
                       items=(PlotItem(label="a", points=(1.0,), mid=1.0),)))
    assert _legend(pair) == ["delta of the shape"]
    for svg in (rounds, pair):
        assert "\u2190 B slower" in svg and "B faster \u2192" in svg
        assert "delta, % = (A/B \u2212 1) \u00d7 100 on latency" in svg


def test_the_timeline_gives_each_series_a_panel_with_its_unit_and_time_in_seconds():
    series = tuple((name, ((0.0, lo), (30.0, hi))) for name, lo, hi in (
        ("util_pct", 0.0, 100.0), ("sm_clock_mhz", 345.0, 1980.0), ("temp_c", 37.0, 62.0),
        ("power_w", 80.0, 696.0)))
    svg = timeline(Timeline(title="t", devices=(("0", series), ("1", series)),
                            cells=((0.0, 10.0, "mm r01/A"), (10.0, 20.0, "mm r01/B"))))
    texts = re.findall(r">([^<>]+)</text>", svg)
    # One framed panel per series and device, in a fixed order, each naming its unit.
    assert svg.count('fill="none" stroke="#ccc"') == 8
    assert texts.count("SM clock") == 2 and texts.index("SM clock") < texts.index("utilisation")
    for unit in ("MHz", "W", "\u00b0C", "%"):
        assert texts.count(unit) == 2
    assert texts.count("campaign time, s") == 2 and "cell, side A" in texts and "cell, side B" in texts
    assert "2000" in texts and "30" in texts  # a y tick of the clock; the x axis ends at 30 s


def test_folding_changes_the_html_only(monkeypatch):
    for model in (rounds_model(layout.FOLD_ABOVE + 5), screen_model(layout.FOLD_ABOVE + 5)):
        folded = {fmt: zl_report.render(model, fmt) for fmt in ("text", "md", "html")}
        monkeypatch.setattr(layout, "FOLD_ABOVE", 10**9)
        for fmt in ("text", "md"):
            assert zl_report.render(model, fmt) == folded[fmt], fmt
        assert zl_report.render(model, "html") != folded["html"]
        monkeypatch.undo()


def _folded_ids(page: str) -> list[str]:
    return re.findall(r'<details class="fold" id="([^"]+)">', page)


def test_a_campaign_folds_above_the_threshold_only_and_only_what_did_not_change():
    assert 'class="fold"' not in zl_report.render(rounds_model(layout.FOLD_ABOVE), "html")
    model = rounds_model(layout.FOLD_ABOVE + 1)
    page = zl_report.render(model, "html")
    # in the answer's order: worst first
    assert _folded_ids(page) == [layout.anchor(o["op"])
                                 for o in ordered_operators(model["summary"]["operators"])
                                 if o["verdict"] in ("NO_CHANGE", "INCONCLUSIVE")]
    # Every operator's IR change folds under its first line, the changed ones' included.
    assert page.count("<summary><h3>IR change</h3>") == layout.FOLD_ABOVE + 1
    screen = zl_report.render(screen_model(layout.FOLD_ABOVE + 1), "html")
    assert _folded_ids(screen) == []  # every operator of this screen changed
    assert screen.count("<summary><h3>IR change</h3>") == layout.FOLD_ABOVE + 1
