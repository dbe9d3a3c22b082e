"""Plain text for terminals and logs, within the terminal's width; colour through rich
when asked and available.

Numbers are never cut: a table wider than the terminal first moves the columns that
hold one value in every row (but its verdict) into a line above it, then wraps its
text columns and headers, and only then prints each row as a record (``header: value``
lines).
"""

from __future__ import annotations

import io
import shutil
import textwrap

from zl_report.blocks import Bullets, Cards, Details, Document, Heading, Para, Plot, Table, Timeline
from zl_report.columns import factored

_RICH_STYLES = {"good": "green", "bad": "bold red", "warn": "yellow", "muted": "dim",
                "title": "bold underline", "heading": "bold"}
# Piped output (no terminal, no COLUMNS) is as wide as a wide terminal, not unbounded.
DEFAULT_WIDTH = 100
MIN_WIDTH = 40
# A text column is not wrapped narrower than this.
_MIN_TEXT_COLUMN = 12
_GAP = "  "

Line = tuple[str, "str | None"]  # the text, its tone


def width_now() -> int:
    """The terminal's width (``COLUMNS`` first), DEFAULT_WIDTH where there is none."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def render_text(doc: Document, *, color: bool = False, width: int | None = None) -> str:
    lines = text_lines(doc, width or width_now())
    if color:
        try:
            return _render_rich(lines, width or width_now())
        except ImportError:
            pass
    return "\n".join(text for text, _ in lines).rstrip() + "\n"


def text_lines(doc: Document, width: int) -> list[Line]:
    """The title, the details, and last the answer: a terminal's last lines are what stays
    in view when the report ends."""
    out: list[Line] = [*_wrap(doc.title, width, None, style="title"),
                       ("=" * min(len(doc.title), width), None)]
    for block in _drawn((*doc.blocks, *doc.answer)):
        if isinstance(block, Heading):
            out += [("", None), *_wrap(block.text, width, None, style="heading"),
                    ("-" * min(len(block.text), width), None)]
        elif isinstance(block, Para):
            out += _wrap(block.text, width, block.tone)
        elif isinstance(block, Bullets):
            for item in block.items:
                out += _wrap(item, width, block.tone, first="  - ", rest="    ")
        elif isinstance(block, Table):
            out += [(line, tone) for line, tone in table_lines(block, width)]
        elif isinstance(block, Cards):
            out += _wrap("  ".join(f"{k}: {v}" for k, v, _ in block.items), width, None)
        elif isinstance(block, Details):
            out += _wrap(f"({block.summary}: zl diff shows it)", width, "muted")
        elif isinstance(block, (Plot, Timeline)):
            continue  # plots are drawn in HTML only; the table beside each carries the numbers
    return out


def _drawn(blocks: tuple) -> list:
    """The blocks text draws: no plots, and no heading of a section that only had plots
    (the telemetry's)."""
    out = [b for b in blocks if not isinstance(b, (Plot, Timeline))]
    return [b for i, b in enumerate(out)
            if not (isinstance(b, Heading) and (i + 1 == len(out) or (
                isinstance(out[i + 1], Heading) and out[i + 1].level <= b.level)))]


def _wrap(text: str, width: int, tone: str | None, *, first: str = "", rest: str = "",
          style: str = "") -> list[Line]:
    lines = textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False) or [first.rstrip()]
    return [(line, style or tone) for line in lines]


def table_lines(table: Table, width: int = 10**6) -> list[Line]:
    """The table within ``width``: constant columns moved above it, then text columns
    wrapped, then one record per row."""
    out: list[Line] = [("", None)]
    if _fit_widths(list(table.headers), [list(r) for r in table.rows], table.align, width,
                   shrink=False) is None:
        note, table = factored(table)
        if note:  # an empty column just goes
            out += _wrap(f"every row: {note}", width, "muted")
    headers, rows, align = list(table.headers), [list(r) for r in table.rows], table.align
    tones = list(table.tones or (None,) * len(rows))
    widths = _fit_widths(headers, rows, align, width)
    if widths is None:
        out += _records(headers, rows, tones, width)
    else:
        out += _grid(headers, rows, align, tones, widths, width)
    out.append(("", None))
    return out


def _natural(headers: list[str], rows: list[list[str]]) -> list[int]:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    return widths


def _longest_word(cells: list[str]) -> int:
    return max((len(w) for c in cells for w in c.split()), default=1)


def _fit_widths(headers, rows, align, width, *, shrink: bool = True) -> list[int] | None:
    """Column widths within ``width``, narrowing the widest text column step by step
    (``shrink``); None when that does not fit (numbers are never cut)."""
    widths = _natural(headers, rows)
    if not shrink:
        return widths if sum(widths) + len(_GAP) * (len(widths) - 1) <= width else None
    cells = _natural([""] * len(headers), rows)
    # Headers wrap at their spaces; number columns keep their cells whole.
    floor = [max(_longest_word([headers[i].replace("-", "- ")]),  # a header breaks at hyphens too
                 cells[i] if align[i] == "r" else
                 max(min(cells[i], _MIN_TEXT_COLUMN), _longest_word([r[i] for r in rows])))
             for i in range(len(widths))]
    if align[-1] == "l":  # the last text column spills below its row (_grid)
        floor[-1] = max(_longest_word([headers[-1].replace("-", "- ")]), _first_words(rows))
    while sum(widths) + len(_GAP) * (len(widths) - 1) > width:
        narrowable = [i for i in range(len(widths)) if widths[i] > floor[i]]
        if not narrowable:
            return None
        widths[max(narrowable, key=lambda i: widths[i])] -= 1  # the widest gives first
    return widths


def _first_words(rows) -> int:
    """The width the last column needs for each cell's first word."""
    return max((len(r[-1].split()[0]) for r in rows if r[-1].split()), default=1)


def _grid(headers, rows, align, tones, widths, width) -> list[Line]:
    spill = align[-1] == "l"

    def lines(cells, tone, *, header: bool = False) -> list[Line]:  # cells side by side
        wrapped = [_cell_lines(c, w, hyphens=header) for c, w in zip(cells, widths, strict=True)]
        below: list[str] = []
        if spill and not header and len(wrapped[-1]) > 1:
            # A long last cell (a verdict and its reason) keeps what fits its column in the
            # row and runs on under it, full width, in one piece.
            first = wrapped[-1][0]
            rest = cells[-1].split(None, len(first.split()))[-1]
            wrapped[-1] = [first]
            below = textwrap.wrap(rest, width=width, initial_indent="    ", subsequent_indent="    ",
                                  break_long_words=False, break_on_hyphens=False)
        height = max(len(w) for w in wrapped)
        out = []
        for k in range(height):
            parts = [(col[k] if k < len(col) else "") for col in wrapped]
            out.append((_GAP.join(p.rjust(w) if a == "r" else p.ljust(w)
                                  for p, w, a in zip(parts, widths, align, strict=True)).rstrip(), tone))
        return out + [(line, tone) for line in below]

    out = lines(headers, None, header=True)
    out.append((_GAP.join("-" * w for w in widths), None))
    for row, tone in zip(rows, tones, strict=True):
        out += lines(row, tone)
    return out


def _cell_lines(cell: str, width: int, *, hyphens: bool = False) -> list[str]:
    if len(cell) <= width:
        return [cell]
    return textwrap.wrap(cell, width=width, break_long_words=False,
                         break_on_hyphens=hyphens) or [""]


def _records(headers, rows, tones, width) -> list[Line]:
    out: list[Line] = []
    for row, tone in zip(rows, tones, strict=True):
        out += _wrap(row[0], width, tone)
        for header, cell in zip(headers[1:], row[1:], strict=True):
            out += _wrap(f"{header}: {cell}", width, tone, first="    ", rest="      ")
    return out


def _render_rich(lines: list[Line], width: int) -> str:
    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=width, highlight=False)
    for text, tone in lines:
        console.print(Text(text, style=_RICH_STYLES.get(tone or "", "")), soft_wrap=True)
    return buf.getvalue()
