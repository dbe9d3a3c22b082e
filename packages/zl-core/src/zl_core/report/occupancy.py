"""How busy a campaign kept its devices: the seconds they timed, against the campaign's wall.

Each cell's ``phases`` record says when it held its device for timing
(:mod:`zl_core.interface.occupancy`). Per device (lanes that share one, ``--per-device``,
count once: the intervals of all its cells are united, never added), the busy seconds are
that union; the campaign's wall runs from its first cell's start to its last cell's end.
The cells are the last status row of each cell (rounds, controls, a screen's pairs), the
accuracy-test cells (``<op>/check/A|B``) and a sharded sweep's shard cells
(``<cell>/sweep_shards/shard*``): all of them hold a device.

A cell that recorded no intervals (an older zl, a killed cell after its last record) is
never read as idle: ``busy_s`` is what the cells recorded, a lower bound, and
``busy_max_s`` adds the unknown cells' windows, an upper bound (None where such a cell
has no window either); ``unknown_cells`` counts them, and the renderers say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from zl_core.cells.sweep_shards import SHARDS_DIR
from zl_core.foundation.errors import BadInputError
from zl_core.interface import caliber, occupancy
from zl_core.store.layout import CampaignLayout
from zl_core.store.status_table import CellKey, StatusRow


def campaign_occupancy(layout: CampaignLayout, rows: Mapping[CellKey, StatusRow],
                       check_dirs: Iterable[Path] = ()) -> dict | None:
    """``{"wall_s", "idle_s", "cells", "unknown_cells", "busy_s", "busy_max_s", "share",
    "share_max", "bridged_s", "lanes": [...]}``; None when no cell has a window."""
    cells: list[tuple[str, str, occupancy.CellBusy]] = []  # (host, device, busy)
    for row in rows.values():
        start, end = row.start_s, row.end_s
        window = (start, end) if start is not None and end is not None and end >= start else None
        cell = _inside(layout, row.cell)
        if cell is not None:
            cells += _read(cell, window, fallback_device=row.device)
    for cell in check_dirs:
        cells += _read(cell, None, fallback_device="")
    windows = [busy.window for _, _, busy in cells if busy.window is not None]
    if not windows:
        return None
    wall = max(e for _, e in windows) - min(s for s, _ in windows)
    hosts = {host for host, _, _ in cells}
    lanes: dict[str, list[occupancy.CellBusy]] = {}
    for host, device, busy in cells:
        lanes.setdefault(f"{host}:{device}" if len(hosts) > 1 else device, []).append(busy)
    raw = [_lane(items) for _, items in sorted(lanes.items())]
    busy_s = sum(low for low, _, _, _ in raw)
    highs = [high for _, high, _, _ in raw]
    busy_max = None if any(h is None for h in highs) else sum(h for h in highs if h is not None)
    capacity = wall * len(raw)
    out = [{"lane": name, "cells": len(items), "unknown_cells": unknown,
            "busy_s": round(low, 3), "busy_max_s": _round(high),
            "share": _share(low, wall), "share_max": _share(high, wall), "bridged_s": round(bridged, 3)}
           for (name, items), (low, high, unknown, bridged) in zip(sorted(lanes.items()), raw, strict=True)]
    return {"wall_s": round(wall, 3), "idle_s": round(wall - occupancy.measure(windows), 3),
            "cells": len(cells), "unknown_cells": sum(unknown for _, _, unknown, _ in raw),
            "busy_s": round(busy_s, 3), "busy_max_s": _round(busy_max),
            "share": _share(busy_s, capacity), "share_max": _share(busy_max, capacity),
            "bridged_s": round(sum(round(bridged, 3) for _, _, _, bridged in raw), 3), "lanes": out}


def _lane(items: list[occupancy.CellBusy]) -> tuple[float, float | None, int, float]:
    """(busy seconds known, at most, cells unknown, seconds bridged) of one device's cells."""
    known = [span for busy in items for span in busy.known]
    unknown = [span for busy in items for span in busy.unknown]
    unbounded = any(not busy.complete and not busy.unknown for busy in items)
    high = None if unbounded else occupancy.measure(known + unknown)
    return (occupancy.measure(known), high, sum(1 for busy in items if not busy.complete),
            sum(busy.bridged_s for busy in items))


def _round(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


def _share(seconds: float | None, of: float) -> float | None:
    return None if seconds is None or not of > 0 else round(seconds / of, 4)


def _inside(layout: CampaignLayout, relative: str) -> Path | None:
    cell = (layout.root / relative).resolve()
    if not relative or not cell.is_relative_to(layout.root.resolve()):
        return None  # a status row naming a folder outside the campaign is not read
    return cell


def _read(cell: Path, window: tuple[float, float] | None, *,
          fallback_device: str) -> list[tuple[str, str, occupancy.CellBusy]]:
    """The cell's busy record, and its sweep's shard cells' (each on its own device)."""
    try:
        identity = caliber.read_identity(cell) or caliber.CellIdentity()
    except BadInputError:
        identity = caliber.CellIdentity()
    record = identity.phases
    if window is None and not isinstance(record, Mapping):
        return []  # a check cell that never finished: nothing says when it ran
    device = identity.device or fallback_device or "default"
    out = [(identity.host or "", device, occupancy.read(record, window=window))]
    shards = cell / SHARDS_DIR
    if shards.is_dir():
        for shard in sorted(shards.glob("shard*")):
            if shard.is_dir():
                out += _read(shard, None, fallback_device="")
    return out
