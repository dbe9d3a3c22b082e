"""The HTML report of a 1,000-operator campaign in a real headless Chromium, driven over
the DevTools protocol (tests/browser.py). Checked: the page loads without console errors
or exceptions, typing into the operator filter changes the number of rows shown, sorting
reorders them, and a screenshot comes back at the requested size and is not blank.
It also opens the reports of the real device campaigns and 200-operator models 800 px wide.
"""

from __future__ import annotations

import base64
import math
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser import Cdp, find_browser, png_size_and_colours
from synthetic_report import rounds_model, screen_model
from zl_report import layout as zl_layout
from zl_report import render
from zl_report.answer import ordered_operators
from zl_report.layout import FOLD_ABOVE, UNCHANGED, anchor

WIDTH, HEIGHT = 1200, 900


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium found (apt-get install -y chromium); the browser test needs one")
    root = tmp_path_factory.mktemp("browser")
    report = root / "report.html"
    model = rounds_model(1000)
    report.write_text(render(model, "html"), encoding="utf-8")
    cdp = Cdp(browser, root / "profile")
    try:
        yield cdp, cdp.open(report.as_uri(), WIDTH, HEIGHT), model
    finally:
        cdp.close()


def evaluate(cdp: Cdp, session: str, expression: str):
    return cdp.evaluate(session, expression)


VISIBLE = ("Array.prototype.filter.call(document.querySelector('table.ops').tBodies[0].rows,"
           " r => r.style.display !== 'none').length")


@pytest.mark.slow
def test_the_page_loads_without_console_errors(page):
    cdp, session, _ = page
    assert evaluate(cdp, session, "document.querySelectorAll('table.ops tbody tr').length") == 1000
    assert cdp.errors(session) == []
    assert evaluate(cdp, session, "document.querySelectorAll('script[src],link[href],img[src]').length") == 0


def test_typing_into_the_filter_changes_the_rows_shown(page):
    cdp, session, model = page
    # Every fifth synthetic operator is meant SLOWER; the real statistics judge them, and a
    # chance drift shared by an operator's rounds can leave one INCONCLUSIVE.
    slower = sum(o["verdict"] == "SLOWER" for o in model["summary"]["operators"])
    assert 190 <= slower <= 210
    assert evaluate(cdp, session, VISIBLE) == 1000
    evaluate(cdp, session, "document.querySelector('.filter input').focus()")
    cdp.send("Input.insertText", session, text="SLOWER")
    assert evaluate(cdp, session, VISIBLE) == slower
    assert evaluate(cdp, session, "document.querySelector('.filter span').textContent") == \
        f"{slower} of 1000 operators"
    evaluate(cdp, session, "var i=document.querySelector('.filter input'); i.value='op0007';"
                           "i.dispatchEvent(new Event('input'))")
    assert evaluate(cdp, session, VISIBLE) == 1
    evaluate(cdp, session, "var i=document.querySelector('.filter input'); i.value='';"
                           "i.dispatchEvent(new Event('input'))")
    assert evaluate(cdp, session, VISIBLE) == 1000


def test_a_header_click_sorts_the_table(page):
    cdp, session, model = page
    first = "document.querySelector('table.ops').tBodies[0].rows[0].cells[0].textContent"
    # the page leads with the worst regression
    worst = ordered_operators(model["summary"]["operators"])[0]
    assert worst["verdict"] == "SLOWER" and evaluate(cdp, session, first) == worst["op"]
    evaluate(cdp, session, "document.querySelector('table.ops thead th').click()")  # ascending
    assert evaluate(cdp, session, first) == "op0000"
    evaluate(cdp, session, "document.querySelector('table.ops thead th').click()")  # descending
    assert evaluate(cdp, session, first) == "op0999"


def test_a_screenshot_is_the_right_size_and_not_blank(page, tmp_path):
    cdp, session, _ = page
    shot = base64.b64decode(cdp.send("Page.captureScreenshot", session, format="png")["data"])
    (tmp_path / "report.png").write_bytes(shot)
    width, height, colours = png_size_and_colours(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    assert colours > 30  # a blank page decompresses to a handful of byte values


# --------------------------------------------------------------------------- the pages at 800 px
# The real device campaigns kept in docs/validation/data and 200-operator synthetic models,
# each opened in a tab 800 px wide.

DATA = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data"
ARCHIVES = [*sorted(DATA.glob("2026-12-03-a[ab]-*.tgz")), DATA / "2026-12-05-two-sources" / "campaign.tgz",
            DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz"]
NARROW = 800
LARGE = 200
PAGES = [a.parent.name if a.name == "campaign.tgz" else a.stem for a in ARCHIVES] + [
    "synthetic rounds", "synthetic screen", "long shapes"]


def _long_shapes() -> dict:
    """Shapes that differ only in their last dimension, each longer than a plot's label
    column and with a word no table column can break."""
    model = rounds_model(2)
    for k, row in enumerate(model["rows"]):
        dims = ", ".join(["8192"] * 12 + [str(64 << k)])
        row["shape"] = f"bfloat16 [torch.Size([{dims}]), torch.Size([{dims}])]"
    return model


def _model(name: str, into: Path) -> dict:
    if name == "synthetic rounds":
        return rounds_model(LARGE)
    if name == "synthetic screen":
        return screen_model(LARGE)
    if name == "long shapes":
        return _long_shapes()
    from zl_core.report.dispatch import build

    archive = next(a for a in ARCHIVES if name in (a.stem, a.parent.name))
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (meta,) = [p for p in into.rglob("campaign.json")
               if p.parent.name.startswith(("ab_", "aa_", "screen_"))]
    return build(meta.parent, allow_mismatch=True)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium found (apt-get install -y chromium); the browser test needs one")
    cdp = Cdp(browser, tmp_path_factory.mktemp("profile"))
    try:
        yield cdp
    finally:
        cdp.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """name -> (model, page file)."""
    root = tmp_path_factory.mktemp("pages")
    out = {}
    for n, name in enumerate(PAGES):
        model = _model(name, root / f"campaign{n}")
        page = root / f"page{n}.html"
        page.write_text(render(model, "html"), encoding="utf-8")
        out[name] = model, page
    return out


def _finite_deltas(model: dict) -> int:
    return sum(1 for r in model["rows"] for d in (r.get("stats") or {}).get("deltas_pct") or ()
               if isinstance(d, int | float) and math.isfinite(d))


# Per forest plot: its legend's words and right edge, its width, its round-dots, the left
# edge of its labels, each label as shown and whole, and the axis' words with their boxes.
PLOTS = """Array.from(document.querySelectorAll('svg.forest')).map(function(svg){
  var box=function(e){var b=e.getBBox(); return [b.x, b.y, b.x+b.width, b.y+b.height];};
  var all=function(sel){return Array.from(svg.querySelectorAll(sel));};
  return {legend: all('g.legend text').map(function(t){return t.textContent;}),
          legendRight: Math.max.apply(null, all('g.legend text').map(function(t){return box(t)[2];})),
          width: svg.viewBox.baseVal.width,
          dots: all('path[stroke-width="5"]').reduce(function(n,p){
            return n+(p.getAttribute('d').match(/h0/g)||[]).length;},0),
          labelsLeft: Math.min.apply(null, all('text.label').map(function(t){return box(t)[0];})),
          labels: all('text.label').map(function(t){var whole=t.querySelector('title');
            return [t.lastChild.textContent, whole ? whole.textContent : t.lastChild.textContent];}),
          axis: Array.from(svg.querySelectorAll('text.axis')).map(function(t){
            return [t.textContent].concat(box(t));})};})"""


def _overlap(a, b) -> bool:
    """Whether two [x0, y0, x1, y1] boxes share any area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.slow
@pytest.mark.parametrize("name", PAGES)
def test_at_800_px_the_page_never_scrolls_sideways_and_every_plot_is_explained(chromium, reports, name):
    model, page = reports[name]
    session = chromium.open(page.as_uri(), NARROW, HEIGHT)
    try:
        assert chromium.errors(session) == []
        assert chromium.evaluate(session, "document.documentElement.scrollWidth") <= NARROW
        # A wide table scrolls inside its own box.
        assert chromium.evaluate(session, "document.querySelectorAll('table').length") == \
            chromium.evaluate(session, "document.querySelectorAll('div.scroll > table').length")
        plots = chromium.evaluate(session, PLOTS)
        assert plots, "every report here draws a forest plot"
        for plot in plots:
            assert len(plot["legend"]) >= 2 and plot["legendRight"] <= plot["width"]
            assert plot["labelsLeft"] >= 0, "a label runs off the plot's left edge"
            shown = [text for text, _ in plot["labels"]]
            assert len(set(shown)) == len({full for _, full in plot["labels"]}), "two labels read alike"
            # The axis says its unit and which way is faster, without its words touching.
            words = [a[0] for a in plot["axis"]]
            assert "\u2190 B slower" in words and "B faster \u2192" in words
            assert any("%" in w and "A/B" in w for w in words)
            boxes = [a[1:] for a in plot["axis"]]
            assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
        operators = model["summary"].get("operators") or model["rows"]
        if len(operators) <= FOLD_ABOVE:
            assert chromium.evaluate(session, "document.querySelectorAll('details.fold').length") == 0
        if model["kind"] == "rounds":
            assert sum(p["dots"] for p in plots) == _finite_deltas(model) > 0
            assert all("per-round delta" in p["legend"] for p in plots)
        timeline = chromium.evaluate(session, "Array.from(document.querySelectorAll('svg.timeline text'))"
                                              ".map(function(t){return t.textContent;})")
        series = {name for _, s in (model["summary"].get("timeline") or {}).get("devices", {}).items()
                  for name in s}
        units = {"sm_clock_mhz": "MHz", "power_w": "W", "temp_c": "\u00b0C", "util_pct": "%"}
        for key in series:
            assert units[key] in timeline, key
        if series:
            assert "campaign time, s" in timeline and "cell, side A" in timeline
    finally:
        chromium.close_tab(session)


# Per table with a verdict column: the right edge of every verdict cell (header included)
# as drawn, with the table's own scroll box at its start.
VERDICT_CELLS = """Array.from(document.querySelectorAll('table')).map(function(t){
  var heads=Array.from(t.tHead.rows[0].cells).map(function(c){return c.textContent;});
  var i=heads.indexOf('verdict'); if(i<0) return null;
  return Array.from(t.rows).map(function(r){var b=r.cells[i].getBoundingClientRect();
    return [b.left, b.right, r.cells[0].textContent];});}).filter(function(x){return x;})"""


@pytest.mark.parametrize("name", PAGES)
def test_at_800_px_every_verdict_cell_is_in_view_beside_its_shape(chromium, reports, name):
    """The verdict is the column after the shape (or operator) in every table, inside an
    800 px window without scrolling sideways."""
    _, page = reports[name]
    session = chromium.open(page.as_uri(), NARROW, HEIGHT)
    try:
        width = chromium.evaluate(session, "window.innerWidth")
        chromium.evaluate(session, "document.querySelectorAll('details').forEach(function(d){d.open=true;})")
        tables = chromium.evaluate(session, VERDICT_CELLS)
        assert tables, "every report here has a table with a verdict column"
        for cells in tables:
            for left, right, first in cells:
                assert left >= 0 and right <= width, (first, left, right, width)
    finally:
        chromium.close_tab(session)


FOLDED = ("Array.from(document.querySelectorAll('details.fold[id]')).map(function(d){"
          "return [d.id, d.open];})")
OPEN_SECTIONS = "Array.from(document.querySelectorAll('h2[id^=\"op-\"]')).map(function(h){return h.id;})"
# Whether every open operator's section comes before every folded one.
OPEN_FIRST = ("(function(){var open=document.querySelectorAll('h2[id^=\"op-\"]'),"
              "folded=document.querySelector('details.fold[id]');"
              "return Array.prototype.every.call(open,function(h){"
              "return !!(h.compareDocumentPosition(folded) & Node.DOCUMENT_POSITION_FOLLOWING);});})()")


def _in_view(cdp: Cdp, session: str, ident: str) -> bool:
    top = cdp.evaluate(session, f"document.getElementById('{ident}').getBoundingClientRect().top")
    return -2 <= top < HEIGHT / 2  # scrolled to, give or take a fraction of a pixel


def test_a_large_campaign_folds_its_unchanged_operators_after_the_changed_ones(chromium, reports):
    model, page = reports["synthetic rounds"]
    ops = ordered_operators(model["summary"]["operators"])  # the page's order
    unchanged = [anchor(o["op"]) for o in ops if o["verdict"] in UNCHANGED]
    assert len(ops) > FOLD_ABOVE and 0 < len(unchanged) < len(ops)
    session = chromium.open(page.as_uri(), NARROW, HEIGHT)
    try:
        folded = chromium.evaluate(session, FOLDED)
        assert [i for i, _ in folded] == unchanged and not any(is_open for _, is_open in folded)
        opened = set(chromium.evaluate(session, OPEN_SECTIONS))
        assert opened == {anchor(o["op"]) for o in ops} - set(unchanged)
        assert chromium.evaluate(session, OPEN_FIRST)
        # A link in the operator table opens the folded section it leads to and shows it.
        target = unchanged[0]
        chromium.evaluate(session, f"document.querySelector('table.ops a[href=\"#{target}\"]').click()")
        assert chromium.evaluate(session, f"document.getElementById('{target}').open")
        assert _in_view(chromium, session, target)
        # So does a hash navigated to, in the page and when the page is opened with it.
        target = unchanged[1]
        chromium.evaluate(session, f"location.hash = '#{target}'; new Promise(r => setTimeout(r, 100))",
                          wait=True)
        assert chromium.evaluate(session, f"document.getElementById('{target}').open")
        assert _in_view(chromium, session, target)
    finally:
        chromium.close_tab(session)
    target = unchanged[2]
    session = chromium.open(f"{page.as_uri()}#{target}", NARROW, HEIGHT)
    try:
        assert chromium.evaluate(session, f"document.getElementById('{target}').open")
        assert _in_view(chromium, session, target)
        assert chromium.errors(session) == []
    finally:
        chromium.close_tab(session)


def _height(cdp: Cdp, page: Path) -> int:
    session = cdp.open(page.as_uri(), NARROW, HEIGHT)
    try:
        return cdp.evaluate(session, "document.documentElement.scrollHeight")
    finally:
        cdp.close_tab(session)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["synthetic rounds", "synthetic screen"])
def test_folding_makes_a_large_page_less_than_60_percent_as_tall(chromium, reports, name, monkeypatch,
                                                                   tmp_path):
    model, page = reports[name]
    folded = _height(chromium, page)
    monkeypatch.setattr(zl_layout, "FOLD_ABOVE", 10**9)
    unfolded = tmp_path / "unfolded.html"
    unfolded.write_text(render(model, "html"), encoding="utf-8")
    assert "<details class=\"fold\"" not in unfolded.read_text(encoding="utf-8")
    assert folded < 0.6 * _height(chromium, unfolded)


# --------------------------------------------------------------------------- zl compare

CAMPAIGN_CELLS = """(function(){var t=document.querySelector('table.ops');
  var heads=Array.from(t.tHead.rows[0].cells).map(function(c){return c.textContent;});
  return {heads: heads, cells: Array.from(t.tBodies[0].rows).map(function(r){
    return Array.from(r.cells).slice(1, heads.length - 2).map(function(c){
      var b=c.getBoundingClientRect(); return [c.textContent, b.left, b.right];});})};})()"""


def test_the_comparison_of_two_cards_at_800_px_shows_every_campaigns_verdict(chromium, tmp_path):
    """zl compare of the kept H200 and H100 campaigns of bmm and addmm, 800 px wide: every
    campaign's column (its heading the condition that tells it apart) in view."""
    from zl_core.report.compare import build_compare
    from zl_core.report.dispatch import build

    campaigns = []
    for n, archive in enumerate((DATA / "2026-12-03-ab-bmm-addmm.tgz",
                                 DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz")):
        with tarfile.open(archive) as tar:
            tar.extractall(tmp_path / str(n), filter="data")
        (meta,) = [p for p in (tmp_path / str(n)).rglob("campaign.json") if p.parent.name.startswith("ab_")]
        campaigns.append(meta.parent)
    model = build_compare([build(c) for c in campaigns], [c.name for c in campaigns])
    page = tmp_path / "compare.html"
    page.write_text(render(model, "html"), encoding="utf-8")
    session = chromium.open(page.as_uri(), NARROW, HEIGHT)
    try:
        assert chromium.errors(session) == []
        assert chromium.evaluate(session, "document.documentElement.scrollWidth") <= NARROW
        found = chromium.evaluate(session, CAMPAIGN_CELLS)
        assert found["heads"][1:3] == ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
        assert len(found["cells"]) == len(model["operators"])
        for row in found["cells"]:
            for text, left, right in row:
                assert left >= 0 and right <= NARROW, (text, left, right)
        said = [text for row in found["cells"] for text, _, _ in row]
        assert any(t.startswith("SLOWER -28.65%") for t in said)  # addmm on the H100
        assert chromium.evaluate(session, "document.querySelectorAll('svg.forest').length") == 1
    finally:
        chromium.close_tab(session)
