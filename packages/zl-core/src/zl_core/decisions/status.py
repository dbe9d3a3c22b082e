"""``status.tsv``: one row per finished cell, appended as it finishes; and the
throttle/drift judgement of those cells against the campaign's telemetry."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from zl_core.cells.cell import CellOutcome
from zl_core.decisions import drift
from zl_core.foundation.atomic import write_text_atomic
from zl_core.foundation.errors import BadInputError
from zl_core.foundation.stamps import utc_stamp
from zl_core.interface import contract
from zl_core.store.layout import CampaignLayout
from zl_core.store.status_table import COLUMNS, CellKey, StatusRow

#: drift.flag_cells notes that mean "no telemetry to judge", not "drifted".
UNJUDGED_FLAGS = ("no_samples", "no_busy_samples")


def append_status(campaign: Path, *, round_no: int, op: str, side: str, switch_value: str,
                  outcome: CellOutcome, flags: str = "") -> StatusRow:
    layout = CampaignLayout(campaign)
    path = layout.status_file
    if path.exists():
        _drop_cut_row(path)
    new = not path.exists() or path.stat().st_size == 0
    row = StatusRow(
        finished=utc_stamp(outcome.end),
        round=str(round_no), op=op, side=side, switch_value=switch_value,
        rc=str(outcome.rc), elapsed_s=f"{outcome.elapsed_s:.1f}",
        timed_out="1" if outcome.timed_out else "0",
        success_rows=str(outcome.success_rows), failed_rows=str(outcome.failed_rows),
        replay_fallback=str(outcome.markers.get(contract.AUTOTUNE_REPLAY_FALLBACK, 0)),
        no_graph=str(outcome.markers.get(contract.BENCHMARK_DIRECT_NO_CUDAGRAPH, 0)),
        poisoned=str(outcome.markers.get(contract.BENCHMARK_CAPTURE_POISONED, 0)),
        start=f"{outcome.start:.3f}", end=f"{outcome.end:.3f}",
        cell=layout.relative(outcome.cell_dir),
        flags=flags,
        device=_device_of(outcome.cell_dir),
        stalled="1" if outcome.stalled else "0",
    )
    with open(path, "a", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        if new:
            writer.writeheader()
        writer.writerow(row.to_dict())
    return row


def _drop_cut_row(path: Path) -> None:
    """A writer killed mid-row leaves a last line without its newline; the next row would
    be glued to it. Cut that partial row off first (the resume restores the rows of finished
    cells that have none: zl_core.campaigns.state.restore_status)."""
    with open(path, "rb+") as fh:
        size = fh.seek(0, 2)
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        fh.seek(max(0, size - 65536))
        tail = fh.read()
        keep = size - len(tail) + tail.rfind(b"\n") + 1 if b"\n" in tail else 0
        fh.truncate(keep)


def read_status(campaign: Path) -> list[StatusRow]:
    """Rows of status.tsv; a truncated last line (killed writer) is dropped."""
    path = CampaignLayout(campaign).status_file
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        rows = [StatusRow.from_dict(line) for line in csv.DictReader(fh, delimiter="\t")]
    return [row for row in rows if row is not None]


def _device_of(cell_dir: Path) -> str:
    """The device a cell ran on, from its identity (lanes put cells on many devices)."""
    from zl_core.interface.caliber import read_identity

    try:
        identity = read_identity(cell_dir)
    except BadInputError:  # the column stays empty; the report names the corrupt identity
        return ""
    return (identity.device if identity is not None else None) or ""


def latest_by_cell(rows: Iterable[StatusRow]) -> dict[CellKey, StatusRow]:
    """The last status row of every (op, round, side); a rerun cell replaces its row."""
    return {row.key: row for row in rows if row.key is not None}


def rewrite_flags(campaign: Path, flags: dict[tuple[str, str, str], list[str]]) -> int:
    """Add flags to the ``flags`` column of finished cells, keyed (op, round, side).

    Rewritten atomically once the campaign is over (cells append while it runs).
    Returns how many rows gained a flag.
    """
    rows = read_status(campaign)
    changed = 0
    for number, row in enumerate(rows):
        extra = flags.get((row.op, row.round, row.side), [])
        have = row.flag_list
        new = [f for f in extra if f not in have]
        if new:
            rows[number] = attrs.evolve(row, flags=",".join(have + new))
            changed += 1
    if not changed:
        return 0
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(row.to_dict() for row in rows)
    write_text_atomic(CampaignLayout(campaign).status_file, buf.getvalue())
    return changed


def judge_cells(campaign: Path, cells: dict[CellKey, StatusRow],
                device_of: Callable[[CellKey], str | None]) -> dict[CellKey, list[str]] | None:
    """Every started cell's telemetry flags (drift, throttle, and the ``no_samples``-style
    notes), or None when the campaign sampled no telemetry.

    The one place that turns status rows into the time windows :func:`drift.flag_cells`
    judges: a cell that never started (preflight refusal, end == start) has no window.
    ``device_of`` names the device a cell ran on (None: any).
    """
    telemetry = CampaignLayout(campaign).telemetry_file
    if not telemetry.is_file():
        return None
    windows, keys = [], {}
    for key, row in cells.items():
        start, end = row.start_s, row.end_s
        if start is None or end is None or end <= start:
            continue
        op, round_no, side = key
        label = f"{op} {round_no} {side}"
        keys[label] = key
        device = device_of(key)
        windows.append(drift.CellWindow(label=label, device=None if device is None else str(device),
                                        start=start, end=end,
                                        group=drift.load_group(op, round_no, side)))
    samples = drift.read_telemetry_tsv(telemetry)
    return {keys[flag.label]: list(flag.flags) for flag in drift.flag_cells(windows, samples)
            if flag.flags}


def telemetry_flags(campaign: Path, device: str | None) -> dict[tuple[str, str, str], list[str]]:
    """Throttle/drift flags of each finished cell, keyed as :func:`rewrite_flags` wants."""
    cells = latest_by_cell(read_status(campaign))
    # Each cell is judged against its own device's samples (lanes spread cells over devices).
    judged = judge_cells(campaign, cells, lambda key: cells[key].device or device) or {}
    out: dict[tuple[str, str, str], list[str]] = {}
    for (op, round_no, side), flags in judged.items():
        real = [f for f in flags if f not in UNJUDGED_FLAGS]
        if real:
            out[(op, str(round_no), side)] = real
    return out

