"""One self-contained HTML page: inline CSS and SVG, no scripts, nothing fetched."""

from __future__ import annotations

from html import escape

from zl_report.layout import Bullets, Document, Heading, Para, Plot, Table
from zl_report.svg import forest

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#212121;line-height:1.4}
h1{font-size:1.4rem;border-bottom:2px solid #ddd;padding-bottom:.3rem}
h2{font-size:1.15rem;margin-top:1.8rem}
table{border-collapse:collapse;margin:.8rem 0;font-size:.85rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid #e0e0e0;vertical-align:top}
th{background:#fafafa;text-align:left}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
.good{color:#2e7d32}.bad{color:#c62828}.warn{color:#e65100}.muted{color:#757575}
tr.good td:first-child{border-left:3px solid #2e7d32}
tr.bad td:first-child{border-left:3px solid #c62828}
tr.warn td:first-child{border-left:3px solid #e65100}
figure{margin:.8rem 0}figcaption{font-size:.85rem;color:#555}
svg.plot{max-width:100%;height:auto;font-family:inherit}
"""


def _cls(tone: str | None) -> str:
    return f' class="{tone}"' if tone else ""


def render_html(doc: Document) -> str:
    body: list[str] = [f"<h1>{escape(doc.title)}</h1>"]
    for block in doc.blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 2), 4)
            body.append(f"<h{level}>{escape(block.text)}</h{level}>")
        elif isinstance(block, Para):
            body.append(f"<p{_cls(block.tone)}>{escape(block.text)}</p>")
        elif isinstance(block, Bullets):
            items = "".join(f"<li>{escape(i)}</li>" for i in block.items)
            body.append(f"<ul{_cls(block.tone)}>{items}</ul>")
        elif isinstance(block, Table):
            body.append(_table(block))
        elif isinstance(block, Plot):
            body.append(f"<figure>{forest(block)}<figcaption>{escape(block.title)}"
                        "</figcaption></figure>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{escape(doc.title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _table(table: Table) -> str:
    aligns = [' class="r"' if a == "r" else "" for a in table.align]
    head = "".join(f"<th{a}>{escape(h)}</th>" for h, a in zip(table.headers, aligns))
    tones = table.tones or (None,) * len(table.rows)
    rows = []
    for row, tone in zip(table.rows, tones):
        cells = "".join(f"<td{a}>{escape(c)}</td>" for c, a in zip(row, aligns))
        rows.append(f"<tr{_cls(tone)}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
