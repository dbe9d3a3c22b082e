"""``summary.csv``: every measured row of a campaign, one CSV line each.

The report judges; this table only lists, so a spreadsheet or pandas can take a whole
campaign in one read. One line per row of every cell the campaign kept (a rerun cell's
last attempt, as status.tsv's last row names it), in plan order, then round, then side.
The neutral columns come first (:data:`COLUMNS`); the provider's own numbers
(``Row.extra``: FlagGems' torch reference latency and speedup, for instance) follow,
one column per name any row carries, sorted, so the file's columns depend only on
what its rows hold.
"""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

from zl_core.decisions.status import latest_by_cell, read_status
from zl_core.foundation.atomic import write_text_atomic
from zl_core.interface.rows import Row
from zl_core.plugins.cell_rows import read_cell
from zl_core.plugins.host import PluginHost
from zl_core.store.layout import CampaignLayout
from zl_core.store.record import read_campaign
from zl_core.store.status_table import StatusRow

from .state import planned_op

log = logging.getLogger(__name__)

#: The columns every summary.csv has, in this order (docs/outputs.md, "summary.csv").
COLUMNS = ("op", "round", "side", "switch_value", "backend", "device", "cell", "cell_flags",
           "dtype", "size_detail", "status", "latency_ms", "timer", "fallback",
           "replay_spread_pct", "error")


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _line(cell: StatusRow, backend: str, row: Row) -> dict[str, str]:
    line = {"op": cell.op, "round": cell.round, "side": cell.side,
            "switch_value": cell.switch_value, "backend": backend, "device": cell.device,
            "cell": cell.cell, "cell_flags": cell.flags, "dtype": row.dtype,
            "size_detail": row.size_detail, "status": row.status, "latency_ms": _text(row.latency_ms),
            "timer": _text(row.timer), "fallback": _text(row.fallback),
            "replay_spread_pct": _text(row.replay_spread_pct), "error": _text(row.error)}
    line.update({name: _text(value) for name, value in row.extra})
    return line


def summary_lines(campaign: Path, host: PluginHost | None = None) -> list[dict[str, str]]:
    """The lines of ``campaign``'s summary, as column -> text.

    A cell whose rows cannot be read (a corrupt results.json, a provider that raises)
    adds none and is named in a warning; the campaign's failure accounting already
    counts it."""
    layout = CampaignLayout(Path(campaign))
    meta = read_campaign(layout.root)
    order = {planned_op(str(spec), meta): i for i, spec in enumerate(meta.ops or ())}
    cells = sorted(latest_by_cell(read_status(layout.root)).items(),
                   key=lambda item: (order.get(item[0][0], len(order)), item[0][0], item[0][1], item[0][2]))
    lines = []
    for _key, cell in cells:
        cell_dir = layout.root / cell.cell
        if not cell.cell or not cell_dir.is_dir():
            continue
        try:
            rows = read_cell(cell_dir, host).rows
        except Exception as exc:  # noqa: BLE001 - a corrupt file or a provider's bug: the cell
            # already failed for it (cell.count_results); the table goes on without its rows
            log.warning("summary.csv: %s left out: %s", cell.cell, " ".join(str(exc).split()))
            continue
        lines += [_line(cell, meta.backend or "", row) for row in rows]
    return lines


def write_summary(campaign: Path, host: PluginHost | None = None) -> Path:
    """Write ``summary.csv`` into the campaign folder; returns its path."""
    layout = CampaignLayout(Path(campaign))
    lines = summary_lines(layout.root, host)
    extra = sorted({name for line in lines for name in line} - set(COLUMNS))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[*COLUMNS, *extra], lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(lines)
    return write_text_atomic(layout.summary_csv, buf.getvalue())
