"""How ``--plan`` prints an estimate: shared by ``zl screen --plan`` and ``zl ab --plan``."""

from __future__ import annotations

from zl_core.app import PHASE_LABELS, duration


def plan_line(o, width: int) -> str:
    """One operator of a plan: its estimate and where it came from."""
    if o.seconds is None:
        return f"  {o.op:<{width}}  unseen"
    return (f"  {o.op:<{width}}  {duration(o.seconds):>8}  (median of {o.cells_seen} cell(s)"
            + (f", mostly {PHASE_LABELS.get(o.dominant_phase, o.dominant_phase)}" if o.dominant_phase else "")
            + ")")


def estimate_line(est, *, never: str, lanes: str) -> str:
    """The plan's last line: the whole estimate, or why there is none (``never``: what no
    operator of the list has finished on this host; ``lanes``: what the lanes are called)."""
    if est.total_s is None:
        return f"estimate: none; no operator of this list has finished {never} on this host"
    assumed = (f"; {est.unseen} unseen operator(s) counted at the median, "
               f"{duration(est.assumed_s)} each" if est.unseen else "")
    timed = (f"; the device(s) time {duration(est.timing_s)} of it, which no pipeline overlaps"
             if est.timing_s else "")
    return (f"estimate: {duration(est.total_s)} one after the other, about "
            f"{duration(est.makespan_s)} over {est.lanes} {lanes}{timed}{assumed}")
