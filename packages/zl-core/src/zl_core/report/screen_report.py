"""The screen report: per operator IR verdicts of a screen campaign."""

from __future__ import annotations

from pathlib import Path

from zl_core.decisions.pairing import FALLBACK, MIXED_TIMER, OK, count_classes, pair_rows
from zl_core.interface import caliber
from zl_core.interface.ttgir_layout import LAUNCH_FLOOR
from zl_core.ir.section import RAW_ONLY_NOTE, ir_section
from zl_core.plugins.cell_rows import read_cell
from zl_core.store.layout import SIDES, CampaignLayout, cell_label
from zl_core.store.record import CampaignRecord

from .common import _delta_summary, _model, _require_dir, caliber_section, check_caliber_groups
from .provenance import provenance
from .time_spent import time_spent
from .timeline import campaign_timeline

NOISE_FLOOR = "noise floor"


# --------------------------------------------------------------------------- screen


def build_screen(campaign: Path, *, meta: CampaignRecord | None = None, allow_mismatch: bool = False,
                 threshold_pct: float | None = None) -> dict:
    """Per operator IR verdicts of a screen, with the pair's delta range where it means something."""
    from zl_core.decisions.ir_verdict import IR_CHANGED, MEASURED, NO_IR_DIFF, NO_TRITON, VERDICTS
    from zl_core.store.record import read_campaign
    from zl_core.store.screen_table import read_screen

    campaign = _require_dir(campaign, "campaign")
    layout = CampaignLayout(campaign)
    meta = meta if meta is not None else read_campaign(campaign)
    compile_only = bool(meta.compile_only)
    entries = read_screen(campaign)
    compared = [e for e in entries if e.verdict in (*MEASURED, NO_TRITON)]

    identities, check = check_caliber_groups(
        ({cell_label(op, s): caliber.read_identity(layout.cell_dir(op, s)) for s in SIDES}
         for op in (e.op for e in compared)),
        allow_mismatch=allow_mismatch)

    rows, notes = [], []
    for entry in entries:
        op, verdict = entry.op, entry.verdict
        row = {k: getattr(entry, k) for k in (
            "op", "op_file", "dtypes", "verdict", "rows_a", "rows_b", "kernels_a", "kernels_b",
            "convert_layouts_a", "convert_layouts_b", "convert_layouts_all_a",
            "convert_layouts_all_b", "launch_scope", "unmeasured_a", "unmeasured_b",
            "ttgir_files_a", "ttgir_files_b", "timed_out", "notes")}
        row["delta"] = None
        row["ir"] = None
        left_out = [f"{s} {entry.side('unmeasured', s)}" for s in SIDES if entry.side("unmeasured", s)]
        if left_out:
            notes.append(f"{op}: convert_layout counts leave out variants launched at most "
                         f"{LAUNCH_FLOOR} times (input construction, not timed): " + "; ".join(left_out))
        if verdict in (*MEASURED, NO_TRITON):
            row["ir"] = ir_section(*(layout.cell_dir(op, s) for s in SIDES))
            if row["ir"] and row["ir"]["raw_only"]:
                notes.append(f"{op}: {RAW_ONLY_NOTE}")
        if not compile_only and verdict in MEASURED:
            cell_a, cell_b = (read_cell(layout.cell_dir(op, s)) for s in SIDES)
            pairs = pair_rows(cell_a.rows, cell_b.rows)
            ok = [p for p in pairs if p.cls == OK]
            counts = count_classes(pairs)
            delta = _delta_summary(ok)
            delta["label"] = NOISE_FLOOR if verdict == NO_IR_DIFF else "A/B delta (one pair)"
            delta["timers"] = sorted({p.timer for p in ok if p.timer})
            delta["kept_apart"] = counts[FALLBACK] + counts[MIXED_TIMER]
            row["delta"] = delta if delta["n"] else None
            if not delta["n"]:
                notes.append(f"{op}: no comparable rows (same timer, no fallback) to give a range")
        rows.append(row)

    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in VERDICTS}
    if compile_only:
        notes.insert(0, "IR-only screen (compile_only): verdicts come from generated code alone; "
                     "no latencies were measured")
    summary = {
        "campaign": str(campaign), "switch": meta.switch,
        "a_value": meta.a_value, "b_value": meta.b_value,
        "a_env": meta.a_env, "b_env": meta.b_env,
        "compile_only": compile_only, "target": meta.target,
        "counts": counts,
        "ir_changed": [r["op"] for r in rows if r["verdict"] == IR_CHANGED],
        "threshold_pct": threshold_pct,
        "timeline": campaign_timeline(layout),
        "time_spent": time_spent(layout),
        "provenance": provenance(identities),
    }
    title = f"screen {meta.switch or ''}: {campaign.name}".replace("  ", " ")
    return _model("screen", title, caliber_section(identities), check, rows, summary, notes)
