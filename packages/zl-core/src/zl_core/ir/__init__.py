"""Triton IR (TTGIR) knowledge: canonical text, features, and what changed between two cells.

TTGIR is what Triton prints on every backend, so this lives in the core; nothing
here interprets a vendor's dialect beyond printing its names.
"""

from __future__ import annotations

from zl_core.ir.canonical import canonical_ttgir, strip_locations
from zl_core.ir.cells import CellComparison, ChangeGroup, compare_cells, unified_diff
from zl_core.ir.compare import KernelChange, compare_texts
from zl_core.ir.features import KernelFeatures, features

__all__ = ["CellComparison", "ChangeGroup", "KernelChange", "KernelFeatures", "canonical_ttgir",
           "compare_cells", "compare_texts", "features", "strip_locations", "unified_diff"]
