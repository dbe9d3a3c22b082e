"""The IR section a report carries per operator: the comparison, its summary lines, a diff excerpt."""

from __future__ import annotations

from pathlib import Path

from zl_core.ir.cells import compare_cells
from zl_core.ir.rollup import operator_lines

RAW_ONLY_NOTE = ("raw TTGIR differs but canonical TTGIR does not: only names and source "
                 "locations changed (the screen verdict keeps the raw fingerprint)")


def ir_section(a_dir: Path, b_dir: Path) -> dict | None:
    """``CellComparison.to_json()`` plus ``lines`` (the operator summary) and ``raw_only``
    (raw differs, canonical equal); None when neither cell dumped TTGIR."""
    cmp = compare_cells(a_dir, b_dir)
    if not cmp.has_ir:
        return None
    section = cmp.to_json()
    section["lines"] = operator_lines(cmp)
    section["raw_only"] = cmp.raw_equal is False and cmp.canonical_equal is True
    return section
