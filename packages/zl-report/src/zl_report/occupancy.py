"""How busy the campaign kept its devices (``summary.time_spent.occupancy``): a card for
the overview, and a section after "Where the time went" that the pull-request form keeps.

A cell that recorded no device intervals is unknown, never idle: the busy time is then
given as a range, from what the cells recorded to that plus the unknown cells' windows.
"""

from __future__ import annotations

from collections.abc import Mapping

from zl_report.blocks import Block, Heading, Para, Table
from zl_report.format import duration as _duration
from zl_report.format import pct

HEADING = "Device occupancy"


def _share(share: float | None) -> str:
    return "-" if share is None else pct(share * 100, signed=False, digits=1)


def busy_text(o: Mapping) -> str:
    """``41.2%`` or, with unknown cells, ``41.2% to 63.0%`` (``at least 41.2%`` unbounded)."""
    low = _share(o.get("share"))
    if not o.get("unknown_cells"):
        return low
    if o.get("share_max") is None:
        return f"at least {low}"
    return f"{low} to {_share(o['share_max'])}"


def _seconds_text(o: Mapping) -> str:
    low = _duration(o.get("busy_s") or 0.0)
    if not o.get("unknown_cells"):
        return low
    if o.get("busy_max_s") is None:
        return f"at least {low}"
    return f"{low} to {_duration(o['busy_max_s'])}"


def card(spent: Mapping | None) -> tuple[str, str, str | None] | None:
    """The overview's card: the devices' busy share of the wall."""
    o = (spent or {}).get("occupancy")
    if not o or not o.get("wall_s"):
        return None
    if o.get("unknown_cells") and o.get("unknown_cells") == o.get("cells"):
        return ("device busy timing", f"unknown (wall {_duration(o['wall_s'])})", "muted")
    return ("device busy timing", f"{busy_text(o)} of {_duration(o['wall_s'])}", None)


def blocks(spent: Mapping | None) -> list[Block]:
    """The section: the campaign's wall, each device's busy seconds and share, in total."""
    o = (spent or {}).get("occupancy")
    if not o or not o.get("wall_s"):
        return []
    lanes = o.get("lanes") or []
    unknown = o.get("unknown_cells") or 0
    text = (f"The campaign's wall, its first cell's start to its last cell's end: "
            f"{_duration(o['wall_s'])}"
            + (f" ({_duration(o['idle_s'])} with no cell running)" if (o.get("idle_s") or 0) >= 0.05 else "")
            + f". Its {len(lanes)} device(s) timed for {_seconds_text(o)} in all, "
            f"{busy_text(o)} of the wall"
            + (" per device" if len(lanes) > 1 else "")
            + " (timing loops and autotune sweeps, compilation cut out; cells sharing a device "
            "counted once)")
    if unknown:
        text += (f"; {unknown} of {o.get('cells', 0)} cell(s) recorded no device intervals (unknown), "
                 "so the busy time is a range: what the cells recorded, up to that plus the "
                 "unknown cells' windows")
    if o.get("bridged_s"):
        text += f"; up to {_duration(o['bridged_s'])} of it is gaps merged to keep records small"
    piped = (spent or {}).get("pipeline")
    if piped:  # zl ab --pipeline: the waits are in the cells' "other" phase, and are no work
        text += (f"; {piped['cells_gated']} cell(s) ran in a pipeline and waited "
                 f"{_duration(piped['gate_wait_s'])} in all for their device's timing gate "
                 "(in their 'other' phase above)")
    rows = tuple((str(lane.get("lane")), str(lane.get("cells", 0)), _seconds_text(lane), busy_text(lane),
                  str(lane.get("unknown_cells") or "")) for lane in lanes)
    return [Heading(text=HEADING, level=2),
            Para(text=text + ".", tone="warn" if unknown else None),
            Table(headers=("device", "cells", "busy timing", "share of wall", "cells unknown"),
                  rows=rows, align="lrrrr", stays=())]
