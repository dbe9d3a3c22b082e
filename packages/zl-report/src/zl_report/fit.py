"""Fitting a document under a size limit: GitHub's comment limit for the Markdown form.

What a reader of a pull-request comment needs first stays whole: the overview (its
operator table cut to the rows that fit, the count of the rest said), the sections
without an operator (failures, skipped operators, notes), then operators' sections
while they fit, regressions first (SLOWER, MIXED, FASTER, then the rest), each where
the document has it. Every operator left out is named (as many names as
fit) with where the whole report is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zl_report.blocks import Block, Bullets, Heading, Para, Table

#: GitHub refuses a comment (and a pull-request body) longer than this many characters.
GITHUB_COMMENT_LIMIT = 65_536
# Kept free for the closing note that names what was left out.
_FOOTER_RESERVE = 3_000

Render = Callable[[Sequence[Block]], str]


def fit(blocks: Sequence[Block], render: Render, limit: int, *, whole_report: str) -> tuple[Block, ...]:
    """``blocks`` cut so that ``render`` of them is at most ``limit`` characters;
    ``whole_report`` says where every section is (a command or a link)."""
    if len(render(blocks)) <= limit:
        return tuple(blocks)
    head, sections = _sections(blocks)
    budget = limit - _FOOTER_RESERVE
    # The overview may take half the budget; its tables give up rows first.
    head = _shrink(head, render, budget // 2)
    used = len(render(head))
    others = [section for heading, section in sections if not heading.anchor]
    kept_others: list[list[Block]] = []
    for section in others:
        section = _shrink(section, render, max(0, (budget - used) // 2))
        size = len(render(section))
        if used + size <= budget:
            kept_others.append(section)
            used += size
    kept: set[int] = set()
    left_out: list[int] = []
    ops = [i for i, (heading, _) in enumerate(sections) if heading.anchor]
    for index in sorted(ops, key=lambda i: (_priority(sections[i][0].text), i)):
        size = len(render(sections[index][1]))
        if used + size <= budget:
            kept.add(index)
            used += size
        else:
            left_out.append(index)
    names = [sections[i][0].text.split(":")[0] for i in sorted(left_out)]
    dropped_others = len(others) - len(kept_others)
    out = list(head)
    for index, (_, section) in enumerate(sections):
        if index in kept:
            out += section
    for section in kept_others:
        out += section
    out.append(_footer(names, dropped_others, whole_report, render, limit - len(render(out))))
    return tuple(out)


# Sections whose heading names one of these verdicts go in first, in this order: a
# regression is what a reviewer must not miss.
_FIRST = ("SLOWER", "MIXED", "FASTER")


def _priority(heading: str) -> int:
    verdict = heading.rsplit(":", 1)[-1].strip()
    return _FIRST.index(verdict) if verdict in _FIRST else len(_FIRST)


def _sections(blocks: Sequence[Block]) -> tuple[list[Block], list[tuple[Heading, list[Block]]]]:
    """The blocks before the first level-2 heading, and each level-2 section: its heading,
    and its blocks (the heading first)."""
    head: list[Block] = []
    sections: list[tuple[Heading, list[Block]]] = []
    for block in blocks:
        if isinstance(block, Heading) and block.level <= 2:
            sections.append((block, [block]))
        elif sections:
            sections[-1][1].append(block)
        else:
            head.append(block)
    return head, sections


def _shrink(blocks: list[Block], render: Render, budget: int) -> list[Block]:
    """The longest tables and lists cut, one at a time, until the blocks fit ``budget``."""
    blocks = list(blocks)
    while len(render(blocks)) > budget:
        sizes = [(len(render([b])), i, b) for i, b in enumerate(blocks)
                 if isinstance(b, (Table, Bullets)) and _length(b) > 1 and not _is_cut(blocks, i)]
        if not sizes:
            return blocks
        size, index, longest = max(sizes, key=lambda s: s[:2])
        over = len(render(blocks)) - budget
        blocks[index:index + 1] = _cut(longest, render, max(0, size - over))
    return blocks


def _length(block: Table | Bullets) -> int:
    return len(block.rows) if isinstance(block, Table) else len(block.items)


def _is_cut(blocks: list[Block], index: int) -> bool:
    after = blocks[index + 1] if index + 1 < len(blocks) else None
    return isinstance(after, Para) and after.text.startswith(_CUT_MARK)


_CUT_MARK = "... and "


def _cut(block: Table | Bullets, render: Render, budget: int) -> list[Block]:
    """``block`` with as many leading rows or items as fit ``budget``, and a line that
    says how many were left out (at least one row is kept)."""
    total = _length(block)
    low, high = 1, total - 1
    while low < high:  # the most rows that fit
        mid = (low + high + 1) // 2
        if len(render([_first(block, mid)])) <= budget:
            low = mid
        else:
            high = mid - 1
    kind = "row(s)" if isinstance(block, Table) else "item(s)"
    return [_first(block, low),
            Para(text=f"{_CUT_MARK}{total - low} more {kind}, left out to fit a comment: "
                      "the HTML or text report has them all", tone="muted")]


def _first(block: Table | Bullets, n: int) -> Table | Bullets:
    if isinstance(block, Bullets):
        return Bullets(items=block.items[:n], tone=block.tone)
    return Table(headers=block.headers, rows=block.rows[:n], align=block.align,
                 tones=block.tones[:n], interactive=block.interactive, links=block.links[:n])


def _footer(left_out: list[str], dropped: int, whole_report: str, render: Render,
            room: int) -> Para:
    """Names the operators whose sections were left out, as many as fit ``room``."""
    parts = []
    if left_out:
        parts.append(f"{len(left_out)} operator section(s) left out")
    if dropped:
        parts.append(f"{dropped} other section(s) left out")
    lead = (f"{' and '.join(parts)} to stay under the {GITHUB_COMMENT_LIMIT:,}-character comment "
            f"limit; the whole report: {whole_report}")
    names = list(left_out)
    while True:
        shown = ", ".join(names)
        rest = len(left_out) - len(names)
        tail = f" and {rest} more" if rest else ""
        para = Para(text=f"{lead}. Left out: {shown}{tail}." if names else f"{lead}.", tone="warn")
        if len(render([para])) <= room or not names:
            return para
        names = names[: max(0, min(len(names) - 1, len(names) * 3 // 4))]
