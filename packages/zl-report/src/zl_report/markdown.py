"""Markdown: pipe tables, for pull requests and issue comments."""

from __future__ import annotations

from zl_report.blocks import Bullets, Cards, Details, Document, Heading, Para, Plot, Table, Timeline

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
        elif isinstance(block, Cards):
            out += [" · ".join(f"**{_esc(v)}** {_esc(k)}" for k, v, _ in block.items), ""]
        elif isinstance(block, Details):
            fence = "````" if any("```" in line for line in block.lines) else "```"
            out += [f"<details><summary>{_esc(block.summary)}</summary>", "", f"{fence}diff",
                    *block.lines, fence, "</details>", ""]
        elif isinstance(block, (Plot, Timeline)):
            continue  # plots are drawn in HTML only
    return "\n".join(out).rstrip() + "\n"
