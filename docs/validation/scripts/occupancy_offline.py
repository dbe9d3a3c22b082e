"""The occupancy figure of kept campaigns (docs/validation/2026-12-07-device-occupancy.md).

    python3 occupancy_offline.py CAMPAIGN_DIR ...

For each campaign: the report's ``time_spent.occupancy`` as zl builds it today (cells from
before the intervals were recorded read as unknown), and the estimate their phases allow:
the device phases' own seconds (autotune sweep, reference and operator timing, exclusive of
compilations; the accuracy checks' sweeps included), over the same wall. On one device,
one cell at a time, no two cells' device phases overlap, so that sum is what the union of
their intervals would be. One JSON object per campaign on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from zl_core.report.time_spent import time_spent
from zl_core.store.layout import CampaignLayout

DEVICE = ("autotune_sweep", "reference_timing", "operator_timing")

for arg in sys.argv[1:]:
    spent = time_spent(CampaignLayout(Path(arg)))
    if spent is None:
        print(json.dumps({"campaign": Path(arg).name, "cells": 0}))
        continue
    occ = spent["occupancy"]
    rounds = sum(spent["seconds"][k] for k in DEVICE)
    checks = sum((spent.get("checks") or {}).get("seconds", {}).get(k, 0.0) for k in DEVICE)
    busy = rounds + checks
    print(json.dumps({
        "campaign": Path(arg).name, "occupancy": {k: v for k, v in occ.items() if k != "lanes"},
        "lanes": [lane["lane"] for lane in occ["lanes"]], "cell_wall_s": spent["wall_s"],
        "device_phases_s": {k: spent["seconds"][k] for k in DEVICE}, "checks_device_phases_s": round(checks, 3),
        "busy_from_phases_s": round(busy, 3), "share_from_phases": round(busy / occ["wall_s"], 4)}))
