"""What a campaign's cells will cost, from the campaigns this host ran before.

An estimate is only as good as its history, so it says where each figure came from:
an operator's seconds are the median of its finished cells of the same kind and mode
(timed or IR-only) on this host, per side, over the latest :data:`HISTORY` campaigns;
an operator with no such cell is "unseen" and is costed at the median of the seen
operators, and the plan counts how many it assumed. Cells of other hosts, failed or
interrupted cells, and unreadable identities are never used.
"""

from __future__ import annotations

import heapq
import socket
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from zl_core.decisions.status import latest_by_cell, read_status
from zl_core.foundation.errors import BadInputError
from zl_core.interface import caliber
from zl_core.store.status_table import StatusRow

HISTORY = 20


@attrs.frozen(kw_only=True)
class OpEstimate:
    op: str
    seconds: float | None  # all sides of one pass (A + B of a screen); None: unseen
    cells_seen: int  # finished cells of this operator the figure is the median of
    dominant_phase: str | None  # where most of its time went, when its cells recorded phases


@attrs.frozen(kw_only=True)
class Estimate:
    ops: tuple[OpEstimate, ...]
    assumed_s: float | None  # the cost given to each unseen operator
    total_s: float | None  # every operator, one after the other
    lanes: int
    makespan_s: float | None  # longest first over ``lanes`` lanes
    campaigns_read: int
    #: Of all the cells' time, what their devices spent timing (an A/B plan's): no lane
    #: overlaps one device's timings, so over ``lanes`` devices the campaign takes at
    #: least this divided by them. None where not estimated.
    timing_s: float | None = None

    @property
    def unseen(self) -> int:
        return sum(1 for o in self.ops if o.seconds is None)


def history(runs_root: Path, kind: str, *, compile_only: bool,
            host: str | None = None) -> tuple[dict[str, dict[str, list[Mapping]]], int]:
    """``{op: {side: [record, ...]}}`` of finished cells of this host, and how many
    campaigns were read; a record is the cell's assembled phases (``{"wall_s", "seconds",
    ...}``) with its ``round`` and ``side``."""
    host = host or socket.gethostname()
    root = Path(runs_root)
    if not root.is_dir():
        return {}, 0
    campaigns = sorted((p for p in root.glob(f"{kind}_*") if p.is_dir()),
                       key=lambda p: p.stat().st_mtime)[-HISTORY:]
    seen: dict[str, dict[str, list[Mapping]]] = {}
    for campaign in campaigns:
        for (op, round_no, side), row in latest_by_cell(read_status(campaign)).items():
            record = _finished_cell(campaign, row, host=host, compile_only=compile_only)
            if record is not None:
                seen.setdefault(op, {}).setdefault(side, []).append(
                    {**record, "round": round_no, "side": side})
    return seen, len(campaigns)


def _finished_cell(campaign: Path, row: StatusRow, *, host: str,
                   compile_only: bool) -> Mapping | None:
    if row.failed or not row.cell:
        return None
    cell = (campaign / row.cell).resolve()
    if not cell.is_relative_to(campaign.resolve()):
        return None
    try:
        identity = caliber.read_identity(cell) or caliber.CellIdentity()
    except BadInputError:  # safe: an estimate from fewer cells; that campaign's report names it
        return None
    if identity.host != host or identity.compile_only != compile_only:
        return None
    record = identity.phases
    if record is not None and isinstance(record.get("wall_s"), (int, float)):
        return record
    elapsed = row.elapsed  # a cell without phases: its status row's elapsed seconds
    return None if elapsed is None else {"wall_s": elapsed, "seconds": None}


def estimate(ops: Iterable[str], seen: Mapping[str, Mapping[str, list[Mapping]]], *,
             sides: int, lanes: int, campaigns_read: int) -> Estimate:
    """Cost of running ``ops`` (``sides`` cells each) over ``lanes`` lanes."""
    rows = []
    for op in ops:
        by_side = seen.get(op) or {}
        records = [r for side in by_side.values() for r in side]
        if not records:
            rows.append(OpEstimate(op=op, seconds=None, cells_seen=0, dominant_phase=None))
            continue
        per_side = [statistics.median(float(r["wall_s"]) for r in side) for side in by_side.values()]
        seconds = statistics.median(per_side) * sides  # sides never seen cost what the seen ones did
        rows.append(OpEstimate(op=op, seconds=seconds, cells_seen=len(records),
                               dominant_phase=dominant_phase(records)))
    known = [r.seconds for r in rows if r.seconds is not None]
    assumed = statistics.median(known) if known else None
    if assumed is None and rows:
        return Estimate(ops=tuple(rows), assumed_s=None, total_s=None, lanes=lanes,
                        makespan_s=None, campaigns_read=campaigns_read)
    # Every operator's cost: its own, else the median of those seen (no None is left).
    costs = [cost for cost in (r.seconds if r.seconds is not None else assumed for r in rows)
             if cost is not None]
    return Estimate(ops=tuple(rows), assumed_s=assumed, total_s=sum(costs), lanes=lanes,
                    makespan_s=_longest_first(costs, lanes), campaigns_read=campaigns_read)


def _longest_first(costs: list[float], lanes: int) -> float:
    """The campaign's end when each operator goes to the lane that frees first, longest first
    (how the lanes executor orders work it has history for)."""
    ends = [0.0] * max(1, lanes)
    for cost in sorted(costs, reverse=True):
        heapq.heapreplace(ends, ends[0] + cost)
    return max(ends) if costs else 0.0


def dominant_phase(records: list[Mapping]) -> str | None:
    """The phase most of the records' time went to, when they recorded phases."""
    totals: dict[str, float] = {}
    for record in records:
        for name, value in (record.get("seconds") or {}).items():
            if isinstance(value, (int, float)):
                totals[name] = totals.get(name, 0.0) + float(value)
    return max(totals, key=lambda name: totals[name]) if totals else None
