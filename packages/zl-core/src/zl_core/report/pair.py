"""The pair report: one A cell against one B cell."""

from __future__ import annotations

from pathlib import Path

from zl_core.decisions.pairing import FALLBACK, OK, Pair, count_classes, pair_rows, shape_label
from zl_core.foundation.errors import BadInputError
from zl_core.interface import caliber
from zl_core.plugins.cell_rows import read_cell

from .common import (
    DEFAULT_THRESHOLD_PCT,
    DIRECT_NOTE,
    _cell_notes,
    _delta_summary,
    _model,
    _require_dir,
    caliber_section,
    check_caliber,
)
from .provenance import provenance

# --------------------------------------------------------------------------- pair


def _pair_row(pair: Pair) -> dict:
    a, b = pair.a, pair.b
    row = {
        "op": pair.op, "dtype": pair.dtype, "size_detail": pair.size_detail,
        "occurrence": pair.occurrence, "shape": shape_label(pair.key), "class": pair.cls,
        "reason": pair.reason,
        "a_latency_ms": a.latency_ms if a else None,
        "b_latency_ms": b.latency_ms if b else None,
        "delta_pct": pair.delta_pct,
        "a_timer": a.timer if a else None, "b_timer": b.timer if b else None,
        "a_fallback": bool(a and a.fallback), "b_fallback": bool(b and b.fallback),
        "a_status": a.status if a else None, "b_status": b.status if b else None,
        "a_speedup": a.provider_value("speedup") if a else None,
        "b_speedup": b.provider_value("speedup") if b else None,
    }
    return row


def build_pair(a_dir: Path, b_dir: Path, *, allow_mismatch: bool = False,
               threshold_pct: float | None = None) -> dict:
    """One A cell against one B cell: deltas per shape, no verdict (one pair has no noise)."""
    a_dir, b_dir = _require_dir(a_dir, "cell A"), _require_dir(b_dir, "cell B")
    if (a_dir / "campaign.json").is_file() or (b_dir / "campaign.json").is_file():
        raise BadInputError("--ab takes two cell directories, not campaign folders; "
                            "report a campaign with 'zl report CAMPAIGN_DIR'")
    identities = {"A": caliber.read_identity(a_dir), "B": caliber.read_identity(b_dir)}
    check = check_caliber(identities, allow_mismatch=allow_mismatch)
    threshold = DEFAULT_THRESHOLD_PCT if threshold_pct is None else threshold_pct
    cell_a, cell_b = read_cell(a_dir), read_cell(b_dir)
    pairs = pair_rows(cell_a.rows, cell_b.rows)
    ok = [p for p in pairs if p.cls == OK]
    fallback = [p for p in pairs if p.cls == FALLBACK]
    notes = _cell_notes("A", cell_a) + _cell_notes("B", cell_b)
    notes.append("one pair has no noise estimate, so it carries no verdict; "
                 "run A/B rounds (zl ab) for a verdict")
    timers = sorted({p.timer for p in ok if p.timer})
    if "direct" in timers or fallback:
        notes.append(DIRECT_NOTE)
    okd = [p.delta_pct for p in ok if p.delta_pct is not None]
    summary = {
        "a": str(a_dir), "b": str(b_dir),
        "sources": {"A": cell_a.source, "B": cell_b.source},
        "rows_a": len(cell_a.rows), "rows_b": len(cell_b.rows),
        "counts": count_classes(pairs),
        "timers": timers,
        "comparable": _delta_summary(ok),
        "fallback": _delta_summary(fallback),
        "threshold_pct": threshold,
        "beyond_threshold": {"b_faster": sum(1 for d in okd if d > threshold),
                             "b_slower": sum(1 for d in okd if d < -threshold)},
        "markers": {"A": cell_a.markers, "B": cell_b.markers},
        "verdict": None,
        "provenance": provenance(identities),
    }
    op = next((r.op for r in (*cell_a.rows, *cell_b.rows) if r.op), "")
    return _model("pair", f"A/B pair{' ' + op if op else ''}: {a_dir} vs {b_dir}",
                  caliber_section(identities), check, [_pair_row(p) for p in pairs], summary,
                  notes)
