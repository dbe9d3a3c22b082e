"""Markdown: pipe tables, for pull requests and issue comments (cut to fit one:
:mod:`zl_report.fit`)."""

from __future__ import annotations

from collections.abc import Sequence

from zl_report.blocks import (
    Block,
    Bullets,
    Cards,
    Details,
    Document,
    Heading,
    Para,
    Plot,
    Table,
    Timeline,
)
from zl_report.columns import factored
from zl_report.fit import GITHUB_COMMENT_LIMIT, fit

_TONE_PREFIX = {"bad": "**", "warn": "_"}


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _para(text: str, tone: str | None) -> str:
    mark = _TONE_PREFIX.get(tone or "", "")
    return f"{mark}{_esc(text)}{mark}" if mark else _esc(text)


def render_markdown(doc: Document, *, limit: int = GITHUB_COMMENT_LIMIT, link: str | None = None,
                    whole_report: str = "") -> str:
    """The document as Markdown of at most ``limit`` characters. ``link`` (where the HTML
    report is published) is given at the end; a cut report points to it, else to
    ``whole_report`` (the command that renders it all)."""
    title = f"# {_esc(doc.title)}\n\n"
    closing = [Para(text=f"the whole report: {link}")] if link else []
    room = limit - len(title) - (len(_body(closing)) + 1 if closing else 0)
    whole = (*doc.answer, *doc.blocks)  # the answer first
    blocks = fit(doc.answer, doc.blocks, _body, room,
                 whole_report=link or whole_report or "its HTML form")
    cut = len(blocks) != len(whole) or any(a is not b for a, b in zip(blocks, whole, strict=True))
    # A cut report names the link in its own closing line already.
    return title + _body([*blocks, *([] if cut else closing)])


def _body(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out += [f"{'#' * max(2, block.level)} {_esc(block.text)}", ""]
        elif isinstance(block, Para):
            out += [_para(block.text, block.tone), ""]
        elif isinstance(block, Bullets):
            out += [f"- {_esc(item)}" for item in block.items] + [""]
        elif isinstance(block, Table):
            out += _table(block)
        elif isinstance(block, Cards):
            out += [" · ".join(f"**{_esc(v)}** {_esc(k)}" for k, v, _ in block.items), ""]
        elif isinstance(block, Details):
            fence = "````" if any("```" in line for line in block.lines) else "```"
            out += [f"<details><summary>{_esc(block.summary)}</summary>", "", f"{fence}diff",
                    *block.lines, fence, "</details>", ""]
        elif isinstance(block, (Plot, Timeline)):
            continue  # plots are drawn in HTML only
    return "\n".join(out).rstrip() + "\n"


def _table(block: Table) -> list[str]:
    """A pipe table, its constant columns said once above it (as the HTML does), folded
    into ``<details>`` where the block asks."""
    note, table = factored(block)
    out = [f"_every row: {_esc(note)}_", ""] if note else []
    out.append("| " + " | ".join(_esc(h) for h in table.headers) + " |")
    out.append("|" + "|".join("---:" if a == "r" else ":---" for a in table.align) + "|")
    out += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in table.rows]
    out.append("")
    if block.fold:
        return [f"<details><summary>{_esc(block.fold)}</summary>", "", *out, "</details>", ""]
    return out
