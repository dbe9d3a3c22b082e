"""The telemetry timeline of a campaign: samples per device and the cells' time windows.

Long campaigns sample once a second for hours; the report keeps at most
``MAX_POINTS`` samples per device (evenly thinned, first and last kept), enough
for a plot and small enough for a page that is mailed around.
"""

from __future__ import annotations

from zl_core.decisions import drift
from zl_core.decisions.status import read_status
from zl_core.store.layout import CampaignLayout
from zl_core.store.status_table import StatusRow

MAX_POINTS = 400
SERIES = ("sm_clock_mhz", "temp_c", "power_w", "util_pct")


def campaign_timeline(layout: CampaignLayout) -> dict | None:
    """``{"devices": {index: {series: [[t, v], ...]}}, "cells": [...], "t0": epoch}``, or
    None when the campaign has no telemetry and no timed cells."""
    samples = drift.read_telemetry_tsv(layout.telemetry_file)
    spans: list[tuple[StatusRow, float, float]] = []  # the timed cells, start and end
    for row in read_status(layout.root):
        start, end = row.start_s, row.end_s
        if start is not None and end is not None and end > start:
            spans.append((row, start, end))
    if not samples and not spans:
        return None
    t0 = min([s.timestamp for s in samples] + [start for _, start, _ in spans])
    devices: dict[str, dict[str, list]] = {}
    by_device: dict[str, list] = {}
    for s in samples:
        by_device.setdefault(s.index, []).append(s)
    for index, items in sorted(by_device.items()):
        step = max(1, -(-len(items) // MAX_POINTS))
        kept = items[::step] + ([items[-1]] if (len(items) - 1) % step else [])
        devices[index] = {name: [[round(s.timestamp - t0, 2), getattr(s, name)] for s in kept
                                 if getattr(s, name) is not None] for name in SERIES}
    cells = [{"cell": row.cell, "op": row.op, "round": row.round, "side": row.side,
              "start": round(start - t0, 2), "end": round(end - t0, 2)}
             for row, start, end in sorted(spans, key=lambda span: round(span[1] - t0, 2))]
    return {"t0": t0, "devices": devices, "cells": cells}
