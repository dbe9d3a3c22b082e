"""``status.tsv``: one row per finished cell, appended as it finishes."""

from __future__ import annotations

import csv
import time
from pathlib import Path

from zl_core.cell import CellOutcome

STATUS_NAME = "status.tsv"
COLUMNS = ("finished", "round", "op", "side", "switch_value", "rc", "elapsed_s", "timed_out",
           "success_rows", "failed_rows", "replay_fallback", "no_graph", "poisoned",
           "start", "end", "cell", "flags")


def append_status(campaign: Path, *, round_no: int, op: str, side: str, switch_value: str,
                  outcome: CellOutcome, flags: str = "") -> dict[str, str]:
    path = Path(campaign) / STATUS_NAME
    new = not path.exists()
    row = {
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(outcome.end)),
        "round": str(round_no), "op": op, "side": side, "switch_value": switch_value,
        "rc": str(outcome.rc), "elapsed_s": f"{outcome.elapsed_s:.1f}",
        "timed_out": "1" if outcome.timed_out else "0",
        "success_rows": str(outcome.success_rows), "failed_rows": str(outcome.failed_rows),
        "replay_fallback": str(outcome.markers.get("AUTOTUNE_REPLAY_FALLBACK", 0)),
        "no_graph": str(outcome.markers.get("BENCHMARK_DIRECT_NO_CUDAGRAPH", 0)),
        "poisoned": str(outcome.markers.get("BENCHMARK_CAPTURE_POISONED", 0)),
        "start": f"{outcome.start:.3f}", "end": f"{outcome.end:.3f}",
        "cell": str(Path(outcome.cell_dir).resolve().relative_to(Path(campaign).resolve())),
        "flags": flags,
    }
    with open(path, "a", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        if new:
            writer.writeheader()
        writer.writerow(row)
    return row


def read_status(campaign: Path) -> list[dict[str, str]]:
    """Rows of status.tsv; a truncated last line (killed writer) is dropped."""
    path = Path(campaign) / STATUS_NAME
    if not path.is_file():
        return []
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [r for r in rows if all(r.get(c) is not None for c in COLUMNS)]


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
    path = Path(campaign) / STATUS_NAME
    tmp = path.with_suffix(".tsv.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)
    return changed


def telemetry_flags(campaign: Path, device: str | None) -> dict[tuple[str, str, str], list[str]]:
    """Throttle/drift flags of each finished cell from the campaign's telemetry.tsv."""
    from zl_core import drift

    samples = drift.read_telemetry_tsv(Path(campaign) / "telemetry.tsv")
    if not samples:
        return {}
    windows, keys = [], {}
    for row in read_status(campaign):
        try:
            start, end = float(row["start"]), float(row["end"])
        except ValueError:
            continue
        if end <= start:
            continue  # never started (preflight failure): nothing ran to flag
        label = f"{row['op']} r{row['round']} {row['side']}"
        keys[label] = (row["op"], row["round"], row["side"])
        windows.append(drift.CellWindow(label=label, device=device, start=start, end=end,
                                        group=drift.load_group(row["op"], row["round"], row["side"])))
    out: dict[tuple[str, str, str], list[str]] = {}
    for flag in drift.flag_cells(windows, samples):
        real = [f for f in flag.flags if not f.startswith(("no_samples", "no_busy_samples"))]
        if real:
            out[keys[flag.label]] = real
    return out
