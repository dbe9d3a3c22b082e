"""Fitting a document under a size limit: GitHub's comment limit for the Markdown form.

The answer (every operator's verdict, estimate and interval) goes first and whole; were
it alone over the limit, its table keeps the rows that fit, worst first, and names every
other operator by verdict. Then the details shrink, the least needed first: the IR diffs
go, then the tables and lists before the first section are cut to the rows that fit
(the count of the rest said), then the sections without an operator (failures, skipped
operators, notes) stay while they fit, then operators' sections while they fit,
regressions first (SLOWER, MIXED, FASTER, then the rest), each where the document has
it. Every section left out is named, by verdict, with where the whole report is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
from zl_core.foundation.verdicts import FASTER, MIXED, SLOWER

from zl_report.blocks import Block, Bullets, Details, Heading, Para, Table

#: GitHub refuses a comment (and a pull-request body) longer than this many characters.
GITHUB_COMMENT_LIMIT = 65_536
# Kept free for the closing note that names what was left out.
_FOOTER_RESERVE = 3_000

Render = Callable[[Sequence[Block]], str]


def fit(answer: Sequence[Block], blocks: Sequence[Block], render: Render, limit: int, *,
        whole_report: str) -> tuple[Block, ...]:
    """The answer, then ``blocks``, cut so that ``render`` of them is at most ``limit``
    characters; ``whole_report`` says where every section is (a command or a link)."""
    if len(render([*answer, *blocks])) <= limit:
        return (*answer, *blocks)
    budget = limit - _FOOTER_RESERVE
    diffs = sum(1 for b in blocks if isinstance(b, Details))
    blocks = [b for b in blocks if not isinstance(b, Details)]  # the diffs go first
    head, sections = _sections(blocks)
    # The answer may take what the conditions (the blocks before the first section) leave
    # once cut to a quarter of the budget, their tables giving up rows first.
    short_head = _shrink(head, render, budget // 4)
    kept_answer = _fit_answer(list(answer), render, budget - len(render(short_head)))
    used = len(render(kept_answer))
    if used + len(render(blocks)) <= budget:
        return (*kept_answer, *blocks, _footer({}, 0, diffs, whole_report, render,
                                                limit - len(render([*kept_answer, *blocks]))))
    head = _shrink(head, render, max(len(render(short_head)), (budget - used) // 2))
    used += len(render(head))
    others = [section for heading, section in sections if not heading.anchor]
    kept_others: list[list[Block]] = []
    for section in others:
        section = _shrink(section, render, max(0, (budget - used) // 2))
        size = len(render(section))
        if used + size <= budget:
            kept_others.append(section)
            used += size
    kept: set[int] = set()
    left_out: dict[str, list[str]] = {}
    ops = [i for i, (heading, _) in enumerate(sections) if heading.anchor]
    for index in sorted(ops, key=lambda i: (_priority(sections[i][0].text), i)):
        size = len(render(sections[index][1]))
        if used + size <= budget:
            kept.add(index)
            used += size
        else:
            name, _, verdict = sections[index][0].text.rpartition(": ")
            left_out.setdefault(verdict.strip() or "?", []).append(name or sections[index][0].text)
    out = [*kept_answer, *head]
    for index, (_, section) in enumerate(sections):
        if index in kept:
            out += section
    for section in kept_others:
        out += section
    out.append(_footer(left_out, len(others) - len(kept_others), diffs, whole_report, render,
                       limit - len(render(out))))
    return tuple(out)


# Sections whose heading names one of these verdicts go in first, in this order: a
# regression is what a reviewer must not miss.
_FIRST = (SLOWER, MIXED, FASTER)


def _priority(heading: str) -> int:
    verdict = heading.rsplit(":", 1)[-1].strip()
    return _FIRST.index(verdict) if verdict in _FIRST else len(_FIRST)


def _fit_answer(answer: list[Block], render: Render, budget: int) -> list[Block]:
    """The answer whole, or, over ``budget``, its operator table cut to the rows that fit
    and the rest named by verdict."""
    tables = [i for i, b in enumerate(answer) if isinstance(b, Table)]
    if len(render(answer)) <= budget or not tables:
        return answer
    index = tables[-1]
    table = answer[index]
    assert isinstance(table, Table)
    # Named by its verdict where the table has one column of them (a comparison has one
    # per campaign: its rows left out are named by operator alone).
    column = table.headers.index("verdict") if "verdict" in table.headers else None

    def cut(n: int) -> list[Block]:
        rest = [(row[0], row[column] if column is not None else "operators") for row in table.rows[n:]]
        return [*answer[:index], _first(table, n), *_named(rest), *answer[index + 1:]]

    low, high = 0, len(table.rows)
    while low < high:  # the most rows that fit
        mid = (low + high + 1) // 2
        if len(render(cut(mid))) <= budget:
            low = mid
        else:
            high = mid - 1
    return cut(low)


def _named(rows: Sequence[tuple[str, str]]) -> list[Para]:
    by: dict[str, list[str]] = {}
    for name, verdict in rows:
        by.setdefault(verdict, []).append(name)
    return [Para(text=f"no row here, to fit a comment: {verdict} ({len(names)}): {', '.join(names)}",
                 tone="warn") for verdict, names in by.items()]


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
    return attrs.evolve(block, rows=block.rows[:n], tones=block.tones[:n], links=block.links[:n])


def _footer(left_out: dict[str, list[str]], dropped: int, diffs: int, whole_report: str,
            render: Render, room: int) -> Para:
    """Says what was left out: the operators' sections by verdict (as many names as fit
    ``room``), other sections, the IR diffs."""
    parts = []
    sections = sum(len(names) for names in left_out.values())
    if sections:
        parts.append(f"{sections} operator section(s) left out")
    if dropped:
        parts.append(f"{dropped} other section(s) left out")
    if diffs:
        parts.append(f"{diffs} IR diff(s) left out")
    lead = (f"{' and '.join(parts)} to stay under the {GITHUB_COMMENT_LIMIT:,}-character comment "
            f"limit (every operator's verdict is in the table at the top); the whole report: "
            f"{whole_report}")
    shown = {verdict: list(names) for verdict, names in left_out.items()}
    while True:
        said = "; ".join(
            f"{verdict} ({len(left_out[verdict])}): " + ", ".join(names)
            + (f" and {len(left_out[verdict]) - len(names)} more" if len(names) < len(left_out[verdict]) else "")
            for verdict, names in shown.items())
        para = Para(text=f"{lead}. Sections left out: {said}." if said else f"{lead}.", tone="warn")
        longest = max(shown, key=lambda v: len(shown[v]), default=None)
        if len(render([para])) <= room or longest is None or not shown[longest]:
            return para
        names = shown[longest]
        shown[longest] = names[: max(0, min(len(names) - 1, len(names) * 3 // 4))]
