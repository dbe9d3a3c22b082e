"""One self-contained HTML page: inline CSS and SVG, one small inline script of ours
(sorting and filtering the operator table), nothing fetched."""

from __future__ import annotations

from html import escape

from zl_report.blocks import Bullets, Cards, Details, Document, Heading, Para, Plot, Table, Timeline
from zl_report.svg import forest, timeline

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
.cards{display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
.card{border:1px solid #e0e0e0;border-radius:6px;padding:.4rem .8rem;min-width:7rem}
.card b{display:block;font-size:1.3rem}.card span{font-size:.8rem;color:#555}
details{margin:.4rem 0 1rem}summary{cursor:pointer;color:#1565c0}
pre.diff{font-size:.75rem;overflow-x:auto;background:#fafafa;border:1px solid #eee;padding:.5rem}
pre.diff .a{color:#2e7d32}pre.diff .d{color:#c62828}pre.diff .h{color:#6a1b9a}
.filter{margin:.6rem 0}.filter input{padding:.3rem;width:18rem}
th.sort{cursor:pointer;user-select:none}th.sort:after{content:" \\2195";color:#bbb}
"""
_SCRIPT = """
document.querySelectorAll('table.ops').forEach(function(t){
  var body=t.tBodies[0], rows=Array.prototype.slice.call(body.rows), box=document.createElement('div');
  box.className='filter';
  box.innerHTML='<input type="search" placeholder="filter operators, verdicts, IR..." aria-label="filter"> <span></span>';
  t.parentNode.insertBefore(box,t);
  var input=box.querySelector('input'), count=box.querySelector('span');
  function show(){var q=input.value.toLowerCase(), n=0;
    rows.forEach(function(r){var hit=!q||r.textContent.toLowerCase().indexOf(q)>=0;
      r.style.display=hit?'':'none'; if(hit)n++;});
    count.textContent=n+' of '+rows.length+' operators';}
  input.addEventListener('input',show); show();
  Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){th.className+=' sort';
    th.addEventListener('click',function(){var dir=th.dataset.dir==='1'?-1:1; th.dataset.dir=dir===1?'1':'-1';
      rows.sort(function(a,b){var x=a.cells[i].textContent, y=b.cells[i].textContent,
        nx=parseFloat(x), ny=parseFloat(y);
        if(!isNaN(nx)&&!isNaN(ny)) return (nx-ny)*dir; return x.localeCompare(y)*dir;});
      rows.forEach(function(r){body.appendChild(r);});});});
});
"""


def _cls(tone: str | None) -> str:
    return f' class="{tone}"' if tone else ""


def render_html(doc: Document) -> str:
    body: list[str] = [f"<h1>{escape(doc.title)}</h1>"]
    # The one script (ours, inline) only where there is a table for it to sort and filter.
    interactive = any(isinstance(b, Table) and b.interactive for b in doc.blocks)
    for block in doc.blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 2), 4)
            ident = f' id="{escape(block.anchor)}"' if block.anchor else ""
            body.append(f"<h{level}{ident}>{escape(block.text)}</h{level}>")
        elif isinstance(block, Cards):
            body.append('<div class="cards">' + "".join(
                f'<div class="card"><b{_cls(tone)}>{escape(value)}</b><span>{escape(label)}</span></div>'
                for label, value, tone in block.items) + "</div>")
        elif isinstance(block, Details):
            body.append(f"<details><summary>{escape(block.summary)}</summary>"
                        f'<pre class="diff">{_diff_lines(block.lines)}</pre></details>')
        elif isinstance(block, Timeline):
            body.append(f"<figure>{timeline(block)}<figcaption>{escape(block.title)}"
                        "</figcaption></figure>")
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
            + "\n".join(body) + (f"\n<script>{_SCRIPT}</script>" if interactive else "")
            + "\n</body></html>\n")


def _table(table: Table) -> str:
    aligns = [' class="r"' if a == "r" else "" for a in table.align]
    head = "".join(f"<th{a}>{escape(h)}</th>" for h, a in zip(table.headers, aligns))
    tones = table.tones or (None,) * len(table.rows)
    links = table.links or ("",) * len(table.rows)
    rows = []
    for row, tone, link in zip(table.rows, tones, links):
        cells = [f"<td{a}>{escape(c)}</td>" for c, a in zip(row, aligns)]
        if link and cells:
            cells[0] = f'<td{aligns[0]}><a href="#{escape(link)}">{escape(row[0])}</a></td>'
        rows.append(f"<tr{_cls(tone)}>{''.join(cells)}</tr>")
    kind = ' class="ops"' if table.interactive else ""
    return f"<table{kind}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _diff_lines(lines) -> str:
    out = []
    for line in lines:
        tone = ("h" if line.startswith(("@@", "---", "+++")) else "a" if line.startswith("+")
                else "d" if line.startswith("-") else "")
        out.append(f'<span class="{tone}">{escape(line)}</span>' if tone else escape(line))
    return "\n".join(out)
