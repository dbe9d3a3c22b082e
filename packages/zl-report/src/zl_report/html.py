"""One self-contained HTML page: inline CSS and SVG, small inline scripts of ours
(sorting and filtering the operator table, opening a folded section a link leads
into), nothing fetched. Usable from 800 px wide: wide tables scroll in their own box."""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

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
from zl_report.svg import forest, timeline

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#212121;line-height:1.4}
h1{font-size:1.4rem;border-bottom:2px solid #ddd;padding-bottom:.3rem}
h2{font-size:1.15rem;margin-top:1.8rem}
p,li,h1,h2,h3,figcaption{overflow-wrap:anywhere}
.scroll{overflow-x:auto;margin:.8rem 0}
table{border-collapse:collapse;font-size:.85rem}
th,td{padding:.25rem .6rem;border-bottom:1px solid #e0e0e0;vertical-align:top}
th{background:#fafafa;text-align:left}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}
@media (min-width:1000px){td.r{white-space:nowrap}}
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
details.fold{margin:0;border-bottom:1px solid #eee}details.fold>summary{padding:.2rem 0}
details.fold>summary>:first-child{display:inline;font-size:1rem;margin:0;color:#212121}
details.fold>summary span{font-size:.85rem}details.fold[open]{padding-bottom:.8rem}
pre.diff{font-size:.75rem;overflow-x:auto;background:#fafafa;border:1px solid #eee;padding:.5rem}
pre.diff .a{color:#2e7d32}pre.diff .d{color:#c62828}pre.diff .h{color:#6a1b9a}
p.every{margin:.8rem 0 -.4rem;font-size:.85rem}
.filter{margin:.6rem 0}.filter input{padding:.3rem;width:18rem;max-width:60%}
th.sort{cursor:pointer;user-select:none}th.sort:after{content:" \\2195";color:#bbb}
"""
# The filter ignores case unless the query has a capital letter: SLOWER finds the verdict,
# not every "1.04x slower".
_SCRIPT = """
document.querySelectorAll('table.ops').forEach(function(t){
  var body=t.tBodies[0], rows=Array.prototype.slice.call(body.rows), box=document.createElement('div');
  box.className='filter';
  box.innerHTML='<input type="search" placeholder="filter operators, verdicts, IR..." aria-label="filter"> <span></span>';
  t.parentNode.parentNode.insertBefore(box,t.parentNode);
  var input=box.querySelector('input'), count=box.querySelector('span');
  function show(){var q=input.value, exact=q!==q.toLowerCase(), n=0;
    rows.forEach(function(r){var t=exact?r.textContent:r.textContent.toLowerCase(), hit=!q||t.indexOf(q)>=0;
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


_REVEAL = """
function reveal(id){var el=document.getElementById(id);if(!el)return;
  for(var d=el;d;d=d.parentElement){if(d.tagName==='DETAILS')d.open=true;}
  el.scrollIntoView();}
function fromHash(){if(location.hash)reveal(decodeURIComponent(location.hash.slice(1)));}
window.addEventListener('hashchange',fromHash);
document.addEventListener('click',function(e){var a=e.target.closest&&e.target.closest('a[href^="#"]');
  if(a)reveal(decodeURIComponent(a.getAttribute('href').slice(1)));});
fromHash();
"""


# A word this long may break after its underscores in a table cell (verdicts and most
# operator names are shorter and stay whole).
_LONG_WORD = 24


def _cls(tone: str | None) -> str:
    return f' class="{tone}"' if tone else ""


def render_html(doc: Document) -> str:
    # Our scripts (inline) only where there is something for them to do: a table to sort
    # and filter, folded sections to open when a link leads into one.
    blocks = (*doc.answer, *doc.blocks)  # the answer first
    interactive = any(isinstance(b, Table) and b.interactive for b in blocks)
    folds = any(isinstance(b, Heading) and b.fold for b in blocks)
    scripts = (_SCRIPT if interactive else "") + (_REVEAL if folds else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{escape(doc.title)}</title><style>{_CSS}</style></head>\n<body>\n"
            f"<h1>{escape(doc.title)}</h1>\n" + "\n".join(_body(blocks))
            + (f"\n<script>{scripts}</script>" if scripts else "") + "\n</body></html>\n")


def _body(blocks: Sequence[Block]) -> list[str]:
    """The page's parts in order; folded operators' sections after the open ones of their
    run, each run's folded ones under one heading."""
    out: list[str] = []
    moved: list[tuple[Heading, list[Block]]] = []
    for section in _split(blocks, 2):
        head = section[0]
        operator = isinstance(head, Heading) and bool(head.anchor)
        if isinstance(head, Heading) and operator and head.fold:
            moved.append((head, section[1:]))
            continue
        if moved and not operator:
            out += _moved(moved)  # before the next part that is not an operator's
            moved = []
        out += _draw(section)
    return out + _moved(moved)


def _split(blocks: Sequence[Block], level: int) -> list[list[Block]]:
    """The blocks cut before every heading of ``level`` or above."""
    out: list[list[Block]] = [[]]
    for block in blocks:
        if isinstance(block, Heading) and block.level <= level and out[-1]:
            out.append([])
        out[-1].append(block)
    return [s for s in out if s]


def _draw(blocks: Sequence[Block]) -> list[str]:
    """Blocks in order; a folded heading folds what follows it up to the next heading of
    its level or above."""
    out: list[str] = []
    i = 0
    while i < len(blocks):
        block = blocks[i]
        if isinstance(block, Heading) and block.fold:
            end = next((j for j, b in enumerate(blocks[i + 1:], i + 1)
                        if isinstance(b, Heading) and b.level <= block.level), len(blocks))
            out.append(_fold(block, blocks[i + 1:end]))
            i = end
        else:
            out.append(_block(block))
            i += 1
    return out


def _moved(sections: list[tuple[Heading, list[Block]]]) -> list[str]:
    """Folded operators' sections (each its heading and the rest), under one heading that
    says why they are folded."""
    if not sections:
        return []
    verdicts: dict[str, int] = {}
    for head, _ in sections:  # an operator's heading reads "op: VERDICT"
        verdict = head.text.rsplit(": ", 1)[-1]
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    counts = ", ".join(f"{n} {v}" for v, n in verdicts.items())
    return [f'<h2 class="folded">Folded: {len(sections)} operator(s) with no change found</h2>',
            (f'<p class="muted">{escape(counts)}. Each opens on a click, or from its link in the '
             "operator table.</p>"),
            *(_fold(head, rest) for head, rest in sections)]


def _fold(head: Heading, rest: Sequence[Block]) -> str:
    """A collapsed <details>: the heading and the first line under it as its summary; the
    id a link leads to is the <details>' own, so the page's script opens it."""
    level = min(max(head.level, 2), 4)
    ident = f' id="{escape(head.anchor)}"' if head.anchor else ""
    first = next((b.text if isinstance(b, Para) else b.items[0] for b in rest
                  if isinstance(b, Para) or (isinstance(b, Bullets) and b.items)), "")
    preview = f' <span class="muted">{escape(first)}</span>' if first else ""
    return (f'<details class="fold"{ident}><summary><h{level}>{escape(head.text)}</h{level}>'
            f"{preview}</summary>\n" + "\n".join(_draw(rest)) + "</details>")


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        level = min(max(block.level, 2), 4)
        ident = f' id="{escape(block.anchor)}"' if block.anchor else ""
        return f"<h{level}{ident}>{escape(block.text)}</h{level}>"
    if isinstance(block, Cards):
        return '<div class="cards">' + "".join(
            f'<div class="card"><b{_cls(tone)}>{escape(value)}</b><span>{escape(label)}</span></div>'
            for label, value, tone in block.items) + "</div>"
    if isinstance(block, Details):
        return (f"<details><summary>{escape(block.summary)}</summary>"
                f'<pre class="diff">{_diff_lines(block.lines)}</pre></details>')
    if isinstance(block, Timeline):
        return f"<figure>{timeline(block)}<figcaption>{escape(block.title)}</figcaption></figure>"
    if isinstance(block, Para):
        return f"<p{_cls(block.tone)}>{escape(block.text)}</p>"
    if isinstance(block, Bullets):
        items = "".join(f"<li>{escape(i)}</li>" for i in block.items)
        return f"<ul{_cls(block.tone)}>{items}</ul>"
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Plot):
        return f"<figure>{forest(block)}<figcaption>{escape(block.title)}</figcaption></figure>"
    return ""


def _table(table: Table) -> str:
    note, table = factored(table)  # constant columns said once above the table
    headers, rows, align = list(table.headers), [list(r) for r in table.rows], table.align
    aligns = [' class="r"' if a == "r" else "" for a in align]
    head = "".join(f"<th{a}>{escape(h)}</th>" for h, a in zip(headers, aligns, strict=True))
    tones = table.tones or (None,) * len(rows)
    links = table.links or ("",) * len(rows)
    body = []
    for row, tone, link in zip(rows, tones, links, strict=True):
        cells = [f"<td{a}>{_cell(c)}</td>" for c, a in zip(row, aligns, strict=True)]
        if link and cells:
            cells[0] = f'<td{aligns[0]}><a href="#{escape(link)}">{_cell(row[0])}</a></td>'
        body.append(f"<tr{_cls(tone)}>{''.join(cells)}</tr>")
    kind = ' class="ops"' if table.interactive else ""
    # A table wider than the screen scrolls in its own box, never the page.
    return ((f'<p class="muted every">every row: {escape(note)}</p>' if note else "")
            + f'<div class="scroll"><table{kind}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


_KEPT_TOGETHER = re.compile(r"(\dx?) (ns|\u00b5s|ms|s|slower|faster)\b")


def _cell(text: str) -> str:
    """A cell's text; a range breaks after its ``..`` only, never inside a number, a
    latency stays with its unit and a ratio with its word (``3.712 µs``, ``1.65x slower``),
    and a long identifier (mm_kernel_general_host_tma) may break after an underscore."""
    text = _KEPT_TOGETHER.sub("\\1\u00a0\\2", text)
    words = escape(text).replace(" .. ", "\u00a0.. ").split(" ")
    return " ".join(w.replace("_", "_<wbr>") if len(w) >= _LONG_WORD else w for w in words)


def _diff_lines(lines) -> str:
    out = []
    for line in lines:
        tone = ("h" if line.startswith(("@@", "---", "+++")) else "a" if line.startswith("+")
                else "d" if line.startswith("-") else "")
        out.append(f'<span class="{tone}">{escape(line)}</span>' if tone else escape(line))
    return "\n".join(out)
