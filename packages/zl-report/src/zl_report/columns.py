"""Columns that hold one value in every row, said once above a table instead of in each
row: what the HTML and Markdown forms always do, and the text form where a table is
wider than the terminal. A table's ``stays`` columns (its verdict) are never moved."""

from __future__ import annotations

import attrs

from zl_report.blocks import Table


def factored(table: Table) -> tuple[str, Table]:
    """``(note, table)``: the constant columns as ``header: value; ...`` (empty values left
    out) and the table without them; ``("", table)`` where none is constant."""
    rows = table.rows
    constant = [i for i in range(1, len(table.headers))
                if len(rows) > 1 and table.headers[i] not in table.stays
                and len({r[i] for r in rows}) == 1]
    if not constant:
        return "", table
    note = "; ".join(f"{table.headers[i]}: {rows[0][i]}" for i in constant if rows[0][i])
    keep = [i for i in range(len(table.headers)) if i not in constant]
    return note, attrs.evolve(table, headers=tuple(table.headers[i] for i in keep),
                              align="".join(table.align[i] for i in keep),
                              rows=tuple(tuple(r[i] for i in keep) for r in rows))
