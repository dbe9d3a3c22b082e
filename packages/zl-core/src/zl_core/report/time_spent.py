"""Where a campaign's time went: its cells' phases (:mod:`zl_core.interface.phases`) summed.

Read from each finished cell's identity, the last status row of each cell (a rerun
replaces its earlier row). A cell from before phases were recorded, or whose identity
is missing or unreadable, counts in ``cells_without_phases`` and adds nothing, so the
sums are never padded with guesses. The slowest cells are listed with the phase that
dominated each, the first place to look when a campaign is slow.

An A/B operator's accuracy-test cells (``<op>/check/A|B``) hold the device too, and can
take longer than all its rounds (each test autotunes its shapes afresh). They have no
status row; their sum is kept apart, under ``checks``, so the rounds' figures keep their
meaning.

``pipeline`` says what a pipelined campaign's cells (``zl ab --pipeline N``) waited for
their device's timing gate: that wait is in their ``other`` phase, and is no work.

``occupancy`` says how busy the cells kept their devices against the campaign's wall
(:mod:`zl_core.report.occupancy`; the checks' and shards' cells count there: they hold a
device too).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from zl_core.decisions.status import latest_by_cell, read_status
from zl_core.foundation.errors import BadInputError
from zl_core.interface import caliber, phases, timing_gate
from zl_core.interface.contract import ACCURACY_REPORT
from zl_core.store.layout import CampaignLayout

from .occupancy import campaign_occupancy

SLOWEST = 5


def time_spent(layout: CampaignLayout) -> dict | None:
    """``{"cells", "wall_s", "seconds", "share", "unknown_cells", "cells_without_phases",
    "by_side", "slowest", "labels", "checks", "occupancy", "pipeline"}``, or None when the
    campaign finished no cell."""
    records: list[Mapping | None] = []
    per_side: dict[str, list[Mapping | None]] = {}
    slow: list[dict] = []
    rows = latest_by_cell(read_status(layout.root))
    for (op, round_no, side), row in sorted(rows.items()):
        record = _phases_of(layout, row.cell)
        records.append(record)
        per_side.setdefault(side, []).append(record)
        if record is not None:
            slow.append({"op": op, "round": round_no, "side": side,
                         "wall_s": record.get("wall_s"), "phase": _dominant(record)})
    if not records:
        return None
    total = _summed(per_side)
    slow.sort(key=lambda c: -(c["wall_s"] or 0.0))
    total["slowest"] = slow[:SLOWEST]
    total["labels"] = dict(phases.LABELS)  # the renderers name phases as zl_core does
    ops = sorted({op for op, _, _ in rows})
    total["checks"] = _checks(layout, ops)
    total["occupancy"] = campaign_occupancy(layout, rows, _check_cells(layout, ops))
    total["pipeline"] = _gate_waits(records)
    return total


def _gate_waits(records: list[Mapping | None]) -> dict | None:
    """``{"cells_gated", "gate_wait_s"}`` over the cells that took a timing gate; None when
    none did (no pipeline)."""
    waits = [gate.get("waited_s") for record in records if record is not None
             and isinstance(gate := record.get(timing_gate.KEY), Mapping)]
    if not waits:
        return None
    return {"cells_gated": len(waits),
            "gate_wait_s": round(sum(float(w) for w in waits if isinstance(w, (int, float))), 3)}


def _check_cells(layout: CampaignLayout, ops: list[str]) -> list[Path]:
    """The accuracy-test cells of ``ops`` that ran. A check ran only after its operator's
    rounds, so the operators with status rows are the ones that may have one; one that was
    running when the campaign stopped (no report, no end stamp) is left out."""
    return [cell for op in ops for side in ("A", "B")
            if ((cell := layout.check_dir(op, side)) / ACCURACY_REPORT).is_file() or _ended(cell)]


def _checks(layout: CampaignLayout, ops: list[str]) -> dict | None:
    """The finished accuracy-test cells of ``ops`` summed like the rounds' cells, with
    ``by_side``; None when there are none."""
    per_side: dict[str, list[Mapping | None]] = {}
    for cell in _check_cells(layout, ops):
        relative = cell.relative_to(layout.root).as_posix()
        per_side.setdefault(cell.name, []).append(_phases_of(layout, relative))
    return _summed(per_side) if per_side else None


def _ended(cell) -> bool:
    """Whether a cell got to its end (a stalled or timed-out check writes no report)."""
    try:
        identity = caliber.read_identity(cell)
        return identity is not None and identity.finished
    except BadInputError:
        return True  # damaged: counted among the cells without phases, never dropped


def _summed(per_side: Mapping[str, list[Mapping | None]]) -> dict:
    """The cells' phases summed (:func:`zl_core.interface.phases.campaign_sum`), and per side."""
    total = phases.campaign_sum(record for side in sorted(per_side) for record in per_side[side])
    total["by_side"] = {side: phases.campaign_sum(items)["seconds"]
                        for side, items in sorted(per_side.items())}
    return total


def _phases_of(layout: CampaignLayout, relative: str) -> Mapping | None:
    cell = (layout.root / relative).resolve()
    if not relative or not cell.is_relative_to(layout.root.resolve()):
        return None  # a status row naming a folder outside the campaign is not read
    try:
        identity = caliber.read_identity(cell)
    except BadInputError:  # counted in cells_without_phases, never a guess
        return None
    record = identity.phases if identity is not None else None
    return record if record is not None and isinstance(record.get("seconds"), Mapping) else None


def _dominant(record: Mapping) -> str | None:
    seconds = {k: v for k, v in record["seconds"].items() if isinstance(v, (int, float))}
    return max(seconds, key=lambda name: seconds[name]) if seconds else None
