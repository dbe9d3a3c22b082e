"""How ``--plan`` prints an estimate: shared by ``zl screen --plan`` and ``zl ab --plan``."""

from __future__ import annotations

from zl_core.app import PHASE_LABELS


def plan_line(o, width: int) -> str:
    """One operator of a plan: its estimate and where it came from."""
    if o.seconds is None:
        return f"  {o.op:<{width}}  unseen"
    return (f"  {o.op:<{width}}  {duration(o.seconds):>8}  (median of {o.cells_seen} cell(s)"
            + (f", mostly {PHASE_LABELS.get(o.dominant_phase, o.dominant_phase)}" if o.dominant_phase else "")
            + ")")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
