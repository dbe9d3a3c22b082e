"""The page heights and sizes docs/report-html.md states, from the synthetic models of
tests/synthetic_report.py: the 200-operator A/B and screen pages' height in headless
Chromium at 1200 and 800 px, the 1,000-operator A/B page's size (and gzipped), and its
Markdown form before and after the cut to a GitHub comment.

    python docs/validation/scripts/report_sizes.py
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from browser import started_browser
from synthetic_report import rounds_model, screen_model
from zl_report import render


def main() -> None:
    with started_browser() as (cdp, tmp):
        for name, model in (("rounds_model(200)", rounds_model(200)), ("screen_model(200)", screen_model(200))):
            page = tmp / "page.html"
            page.write_text(render(model, "html"), encoding="utf-8")
            for width in (1200, 800):
                session = cdp.open(page.as_uri(), width, 900)
                height = cdp.evaluate(session, "document.documentElement.scrollHeight")
                print(f"{name}: {height:,} px tall at {width} px")
                cdp.close_tab(session)
    big = rounds_model(1000)
    page = render(big, "html").encode()
    print(f"rounds_model(1000) page: {len(page) / 1e6:.2f} MB, {len(gzip.compress(page)) / 1e6:.2f} MB gzipped")
    for name, model in (("rounds_model(1000)", big), ("screen_model(1000)", screen_model(1000))):
        whole, cut = render(model, "md", limit=10**9), render(model, "md")
        sections = len(re.findall(r"^## op\d{4}", cut, re.MULTILINE))
        left = re.search(r"_(\d+) operator section\(s\) left out", cut)
        rows = len(re.findall(r"^\| op\d{4} \| [A-Z_]+ \|", cut.split("\n## op", 1)[0], re.MULTILINE))
        print(f"{name} Markdown: {len(whole) / 1e6:.2f} MB whole; cut: {len(cut):,} characters, "
              f"{rows} rows in the answer's table, {sections} operator sections, "
              f"{left.group(1) if left else 0} left out")


if __name__ == "__main__":
    main()
