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


def render(model: Mapping, fmt: str = "text", *, color: bool = False) -> str:
    """The report in ``fmt``: text | md | html | json.

    ``color`` asks for ANSI colour in text (through rich, when installed).
    """
    if fmt == "json":
        return json.dumps(model, indent=2, default=str) + "\n"
    from zl_report.layout import document

    doc = document(model, brief=fmt == "md")
    if fmt == "text":
        from zl_report.text import render_text

        return render_text(doc, color=color)
    if fmt == "md":
        from zl_report.markdown import render_markdown

        return render_markdown(doc)
    if fmt == "html":
        from zl_report.html import render_html

        return render_html(doc)
    raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "__version__", "render"]
