"""Plain text for terminals and logs; colour through rich when asked and available."""

from __future__ import annotations

import io
import shutil

from zl_report.blocks import Bullets, Cards, Details, Document, Heading, Para, Plot, Table, Timeline

_RICH_STYLES = {"good": "green", "bad": "bold red", "warn": "yellow", "muted": "dim"}


def render_text(doc: Document, *, color: bool = False) -> str:
    if color:
        try:
            return _render_rich(doc)
        except ImportError:
            pass
    out: list[str] = [doc.title, "=" * min(len(doc.title), 100)]
    for block in doc.blocks:
        if isinstance(block, Heading):
            out += ["", block.text, "-" * min(len(block.text), 100)]
        elif isinstance(block, Para):
            out.append(block.text)
        elif isinstance(block, Bullets):
            out += [f"  - {item}" for item in block.items]
        elif isinstance(block, Table):
            out += table_lines(block)
        elif isinstance(block, Cards):
            out.append("  ".join(f"{k}: {v}" for k, v, _ in block.items))
        elif isinstance(block, Details):
            out.append(f"({block.summary}: zl diff shows it)")
        elif isinstance(block, (Plot, Timeline)):
            continue  # plots are drawn in HTML only; the table beside each carries the numbers
    return "\n".join(out).rstrip() + "\n"


def table_lines(table: Table) -> list[str]:
    widths = [len(h) for h in table.headers]
    for row in table.rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells) -> str:
        parts = [c.rjust(w) if a == "r" else c.ljust(w)
                 for c, w, a in zip(cells, widths, table.align)]
        return "  ".join(parts).rstrip()

    return ["", line(table.headers), line("-" * w for w in widths),
            *(line(row) for row in table.rows), ""]


def _render_rich(doc: Document) -> str:
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    buf = io.StringIO()
    width = shutil.get_terminal_size((120, 40)).columns
    console = Console(file=buf, force_terminal=True, width=width, highlight=False)
    console.print(Text(doc.title, style="bold underline"))
    for block in doc.blocks:
        if isinstance(block, Heading):
            console.print()
            console.print(Text(block.text, style="bold"))
        elif isinstance(block, Para):
            console.print(Text(block.text, style=_RICH_STYLES.get(block.tone, "")))
        elif isinstance(block, Bullets):
            for item in block.items:
                console.print(Text(f"  - {item}", style=_RICH_STYLES.get(block.tone, "")))
        elif isinstance(block, Table):
            t = RichTable(show_edge=False, pad_edge=False, box=None, header_style="bold")
            for header, align in zip(block.headers, block.align):
                t.add_column(Text(header), justify="right" if align == "r" else "left")
            tones = block.tones or (None,) * len(block.rows)
            for row, tone in zip(block.rows, tones):
                t.add_row(*(Text(c) for c in row), style=_RICH_STYLES.get(tone, ""))
            console.print(t)
    return buf.getvalue()
