"""Renderers for zl report models (built by ``zl_core.report``).

``render(model, fmt)`` returns the report as text, Markdown, JSON or a
self-contained HTML page. Every form is drawn from one document layout
(:mod:`zl_report.layout`), so they never disagree about content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__version__ = "0.1.0"
FORMATS = ("text", "md", "html", "json")


def render(model: Mapping, fmt: str = "text", *, color: bool = False,
           limit: int | None = None, link: str | None = None) -> str:
    """The report in ``fmt``: text | md | html | json.

    ``color`` asks for ANSI colour in text (through rich, when installed). Markdown is
    cut to ``limit`` characters (default: GitHub's comment limit) and ends with ``link``,
    where the HTML report is published, when one is given.
    """
    if fmt == "json":
        return json.dumps(model, indent=2, default=str) + "\n"
    from zl_report.layout import document

    doc = document(model, brief=fmt == "md")
    if fmt == "text":
        from zl_report.text import render_text

        return render_text(doc, color=color)
    if fmt == "md":
        from zl_report.fit import GITHUB_COMMENT_LIMIT
        from zl_report.markdown import render_markdown

        campaign = (model.get("summary") or {}).get("campaign")
        whole = f"`zl report {campaign} --format html`" if campaign else ""
        return render_markdown(doc, limit=limit or GITHUB_COMMENT_LIMIT, link=link,
                               whole_report=whole)
    if fmt == "html":
        from zl_report.html import render_html

        return render_html(doc)
    raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "__version__", "render"]
