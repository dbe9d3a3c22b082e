"""The pictures of the HTML report in docs/report-html.md, taken in headless Chromium.

    PYTHONPATH=$(ls -d packages/*/src | tr '\\n' ':') python3 docs/validation/scripts/report_screenshots.py [docs/images]

Renders the real H200 campaigns kept in docs/validation/data (the A/B rounds of bmm and
addmm, the two-source screen) and a 200-operator synthetic A/B campaign
(tests/synthetic_report.py) with zl_report, opens each page 1200 and 800 px wide
(tests/browser.py drives the browser over the DevTools pipe), and writes the top of the
page, or one part of it, as a PNG. Prints each picture's size and each page's height.
"""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from browser import started_browser
from synthetic_report import rounds_model
from zl_core.report.dispatch import build
from zl_report import render

DATA = ROOT / "docs" / "validation" / "data"
# (picture, campaign, width, what: "top" or a CSS selector, height in CSS px)
SHOTS = (
    ("report-ab-bmm-addmm-1200", "2026-12-03-ab-bmm-addmm.tgz", 1200, "top", 1500),
    ("report-ab-bmm-addmm-800", "2026-12-03-ab-bmm-addmm.tgz", 800, "top", 1700),
    ("report-forest-addmm-800", "2026-12-03-ab-bmm-addmm.tgz", 800, "figure:nth-of-type(2)", 0),
    ("report-telemetry-800", "2026-12-03-ab-bmm-addmm.tgz", 800, "svg.timeline", 0),
    ("report-screen-two-sources-1200", "2026-12-05-two-sources/campaign.tgz", 1200, "top", 1150),
    ("report-screen-two-sources-800", "2026-12-05-two-sources/campaign.tgz", 800, "top", 1150),
    ("report-folded-200-operators-800", "synthetic", 800, "h2.folded", 700),
)


def page_of(campaign: str, into: Path) -> Path:
    """The HTML report of a kept campaign archive (or of the synthetic model)."""
    page = into / (campaign.replace("/", "-") + ".html")
    if page.exists():
        return page
    if campaign == "synthetic":
        model = rounds_model(200)
    else:
        where = into / campaign.replace("/", "-")
        with tarfile.open(DATA / campaign) as tar:
            tar.extractall(where, filter="data")
        (meta,) = [p for p in where.rglob("campaign.json")
                   if p.parent.name.startswith(("ab_", "aa_", "screen_"))]
        model = build(meta.parent, allow_mismatch=True)
    page.write_text(render(model, "html"), encoding="utf-8")
    return page


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "images")
    with started_browser() as (cdp, tmp):
        for name, campaign, width, what, height in SHOTS:
            session = cdp.open(page_of(campaign, tmp).as_uri(), width, 900)
            if cdp.errors(session):
                sys.exit(f"{name}: the page reported errors: {cdp.errors(session)}")
            page_h = cdp.evaluate(session, "document.documentElement.scrollHeight")
            if what == "top":
                top = 0.0
            else:
                top, box_h = cdp.evaluate(session, f"(function(){{var r=document.querySelector("
                                                   f"'{what}').getBoundingClientRect();"
                                                   "return [r.top+scrollY-8, r.height+16];})()")
                height = height or box_h
            shot = cdp.screenshot(session, clip=(top, min(height, page_h - top)))
            (out / f"{name}.png").write_bytes(shot)
            print(f"{name}.png: {len(shot) / 1e3:.0f} KB; page {width} px wide, {page_h} px tall")
            cdp.close_tab(session)


if __name__ == "__main__":
    main()
