"""``zl diff`` as a function: what the switch changed in one operator's TTGIR."""

from __future__ import annotations

from pathlib import Path

import attrs

from zl_core.foundation.errors import BadInputError
from zl_core.interface.ttgir_layout import TTGIR_DIR
from zl_core.ir import compare_cells, unified_diff
from zl_core.ir.cells import ChangeGroup
from zl_core.ir.compare import CHANGED, ONLY_A, ONLY_B
from zl_core.ir.locate import op_cells, resolve_campaign
from zl_core.ir.rollup import operator_lines

from .inputs import runs_root


@attrs.frozen(kw_only=True)
class OperatorDiff:
    """One operator's A and B cells compared: ``summary`` (the operator's lines, or the
    headline of the one kernel asked for), each kernel's ``groups``, the ``changed``
    variants (TTGIR paths under the cells) and, when asked for, their canonical unified
    ``diff`` lines."""

    campaign: Path
    a_dir: Path
    b_dir: Path
    summary: tuple[str, ...]
    groups: tuple[ChangeGroup, ...]
    changed: tuple[str, ...]
    diff: tuple[str, ...] = ()


def operator_diff(campaign: str, op: str, *, runs: Path | None = None, kernel: str | None = None,
                  full: bool = False, context: int = 3) -> OperatorDiff:
    """Compare side B's TTGIR with side A's for ``op`` of a screen or A/B campaign (A/B:
    round 1); ``campaign`` is a folder or a name under the runs root. An unknown campaign,
    operator or kernel: BadInputError (exit 2)."""
    folder = resolve_campaign(campaign, runs_root(runs))
    a_dir, b_dir = op_cells(folder, op)
    cmp = compare_cells(a_dir, b_dir)
    groups = list(cmp.groups)
    if kernel:
        kernels = sorted({p.split("/")[1] for p in _all_files(a_dir, b_dir) if p.count("/") >= 2})
        if kernel not in kernels:
            raise BadInputError(f"operator {op!r} has no kernel {kernel!r}; its kernels: "
                                f"{', '.join(kernels) or 'none (no TTGIR dumped)'}")
        groups = [g for g in groups if g.kernel == kernel]
    lines = operator_lines(cmp) if not kernel else []
    changed = [f for g in groups if g.change.status in (CHANGED, ONLY_A, ONLY_B) for f in g.files]
    diff = []
    if full:
        for rel in changed:
            diff.append("")
            diff.extend(unified_diff(a_dir, b_dir, rel, context=context))
    return OperatorDiff(campaign=folder, a_dir=a_dir, b_dir=b_dir,
                        summary=tuple(lines or [cmp.headline()]), groups=tuple(groups),
                        changed=tuple(changed), diff=tuple(diff))


def _all_files(a_dir: Path, b_dir: Path) -> set[str]:
    out = set()
    for cell in (a_dir, b_dir):
        root = cell / TTGIR_DIR
        if root.is_dir():
            out |= {p.relative_to(root).as_posix() for p in root.rglob("*.ttgir")}
    return out
