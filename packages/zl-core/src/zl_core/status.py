"""``status.tsv``: one row per finished cell, appended as it finishes; and the
throttle/drift judgement of those cells against the campaign's telemetry."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from pathlib import Path

from zl_core import contract, drift
from zl_core.atomic import write_text_atomic
from zl_core.cell import CellOutcome
from zl_core.stamps import utc_stamp
from zl_core.store.layout import STATUS_FILE, CampaignLayout

STATUS_NAME = STATUS_FILE
COLUMNS = ("finished", "round", "op", "side", "switch_value", "rc", "elapsed_s", "timed_out",
           "success_rows", "failed_rows", "replay_fallback", "no_graph", "poisoned",
           "start", "end", "cell", "flags", "device", "stalled")
#: Columns every row has; ``device`` and ``stalled`` came later (older campaigns read as "").
LATER = ("device", "stalled")
REQUIRED = tuple(c for c in COLUMNS if c not in LATER)
#: drift.flag_cells notes that mean "no telemetry to judge", not "drifted".
UNJUDGED_FLAGS = ("no_samples", "no_busy_samples")
#: A cell of a campaign: (operator, round, side); round 0 is a screen's pair.
CellKey = tuple[str, int, str]


def append_status(campaign: Path, *, round_no: int, op: str, side: str, switch_value: str,
                  outcome: CellOutcome, flags: str = "") -> dict[str, str]:
    layout = CampaignLayout(campaign)
    path = layout.status_file
    if path.exists():
        _drop_cut_row(path)
    new = not path.exists() or path.stat().st_size == 0
    row = {
        "finished": utc_stamp(outcome.end),
        "round": str(round_no), "op": op, "side": side, "switch_value": switch_value,
        "rc": str(outcome.rc), "elapsed_s": f"{outcome.elapsed_s:.1f}",
        "timed_out": "1" if outcome.timed_out else "0",
        "success_rows": str(outcome.success_rows), "failed_rows": str(outcome.failed_rows),
        "replay_fallback": str(outcome.markers.get(contract.AUTOTUNE_REPLAY_FALLBACK, 0)),
        "no_graph": str(outcome.markers.get(contract.BENCHMARK_DIRECT_NO_CUDAGRAPH, 0)),
        "poisoned": str(outcome.markers.get(contract.BENCHMARK_CAPTURE_POISONED, 0)),
        "start": f"{outcome.start:.3f}", "end": f"{outcome.end:.3f}",
        "cell": layout.relative(outcome.cell_dir),
        "flags": flags,
        "device": _device_of(outcome.cell_dir),
        "stalled": "1" if outcome.stalled else "0",
    }
    with open(path, "a", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        if new:
            writer.writeheader()
        writer.writerow(row)
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


def read_status(campaign: Path) -> list[dict[str, str]]:
    """Rows of status.tsv; a truncated last line (killed writer) is dropped."""
    path = CampaignLayout(campaign).status_file
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    rows = [r for r in rows if all(r.get(c) is not None for c in REQUIRED)]
    for row in rows:
        for column in LATER:
            row[column] = row.get(column) or ""
    return rows


def _device_of(cell_dir: Path) -> str:
    """The device a cell ran on, from its identity (lanes put cells on many devices)."""
    from zl_core.caliber import read_identity

    try:
        identity = read_identity(cell_dir) or {}
    except Exception:  # noqa: BLE001 - a missing or corrupt identity leaves the column empty
        return ""
    device = identity.get("device")
    return "" if device is None else str(device)


def latest_by_cell(rows: Iterable[dict[str, str]]) -> dict[CellKey, dict[str, str]]:
    """The last status row of every (op, round, side); a rerun cell replaces its row."""
    out = {}
    for row in rows:
        try:
            out[(row["op"], int(row["round"]), row["side"])] = row
        except (KeyError, ValueError):
            continue
    return out


def rewrite_flags(campaign: Path, flags: dict[tuple[str, str, str], list[str]]) -> int:
    """Add flags to the ``flags`` column of finished cells, keyed (op, round, side).

    Rewritten atomically once the campaign is over (cells append while it runs).
    Returns how many rows gained a flag.
    """
    rows = read_status(campaign)
    changed = 0
    for row in rows:
        extra = flags.get((row["op"], row["round"], row["side"]), [])
        have = [f for f in row["flags"].split(",") if f]
        new = [f for f in extra if f not in have]
        if new:
            row["flags"] = ",".join(have + new)
            changed += 1
    if not changed:
        return 0
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(CampaignLayout(campaign).status_file, buf.getvalue())
    return changed


def judge_cells(campaign: Path, cells: dict[CellKey, dict[str, str]],
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
        try:
            start, end = float(row["start"]), float(row["end"])
        except (KeyError, ValueError):
            continue
        if end <= start:
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
    judged = judge_cells(campaign, cells, lambda key: cells[key].get("device") or device) or {}
    out: dict[tuple[str, str, str], list[str]] = {}
    for (op, round_no, side), flags in judged.items():
        real = [f for f in flags if f not in UNJUDGED_FLAGS]
        if real:
            out[(op, str(round_no), side)] = real
    return out

