"""Markdown: pipe tables, for pull requests and issue comments."""

from __future__ import annotations

from zl_report.layout import Bullets, Document, Heading, Para, Plot, Table

_TONE_PREFIX = {"bad": "**", "warn": "_"}


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _para(text: str, tone: str | None) -> str:
    mark = _TONE_PREFIX.get(tone or "", "")
    return f"{mark}{_esc(text)}{mark}" if mark else _esc(text)


def render_markdown(doc: Document) -> str:
    out: list[str] = [f"# {_esc(doc.title)}", ""]
    for block in doc.blocks:
        if isinstance(block, Heading):
            out += [f"{'#' * max(2, block.level)} {_esc(block.text)}", ""]
        elif isinstance(block, Para):
            out += [_para(block.text, block.tone), ""]
        elif isinstance(block, Bullets):
            out += [f"- {_esc(item)}" for item in block.items] + [""]
        elif isinstance(block, Table):
            out.append("| " + " | ".join(_esc(h) for h in block.headers) + " |")
            out.append("|" + "|".join("---:" if a == "r" else ":---" for a in block.align) + "|")
            out += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in block.rows]
            out.append("")
        elif isinstance(block, Plot):
            continue  # plots are drawn in HTML only
    return "\n".join(out).rstrip() + "\n"
