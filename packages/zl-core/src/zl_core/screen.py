"""``zl screen``: one pinned pair per operator (A records, B replays A), then a
verdict from the TTGIR fingerprints."""

from __future__ import annotations

import json
import time
from pathlib import Path

from zl_core import caliber
from zl_core.backend import Backend
from zl_core.campaign import CellSettings, Progress, new_campaign_dir, write_campaign
from zl_core.cell import CellOutcome, run_cell
from zl_core.errors import PreflightError
from zl_core.host import PluginHost
from zl_core.opspec import OpSpec
from zl_core.provider import Provider
from zl_core.screening import SideResult, screen_verdict
from zl_core.status import append_status
from zl_core.switches import Sides
from zl_core.ttgir_layout import TTGIR_DIR, IrSummary, summarize

SCREEN_TSV = "screen.tsv"
SCREEN_JSON = "screen.json"
COLUMNS = ("op", "op_file", "dtypes", "verdict", "rows_a", "rows_b", "kernels_a", "kernels_b",
           "convert_layouts_a", "convert_layouts_b", "ttgir_files_a", "ttgir_files_b",
           "fingerprint_a", "fingerprint_b", "elapsed_a", "elapsed_b", "timed_out", "notes",
           *caliber.ALL_FIELDS)
_EMPTY_IR = IrSummary(fingerprint=None, files=0, kernels=0, convert_layouts=0)


def run_side(host: PluginHost, provider: Provider, request, campaign: Path, *, round_no: int,
             side: str, switch_value: str, progress: Progress) -> SideResult:
    """Run one cell of a campaign, append its status row, and summarise its IR."""
    try:
        outcome = run_cell(host, provider, request)
    except PreflightError as exc:
        now = time.time()  # the cell never started: an empty window, stamped when refused
        outcome = CellOutcome(cell_dir=Path(request.out_dir), rc=exc.exit_code, timed_out=False,
                              elapsed_s=0.0, start=now, end=now, markers={}, success_rows=0,
                              failed_rows=0, preflight=str(exc))
        append_status(campaign, round_no=round_no, op=request.op.op, side=side,
                      switch_value=switch_value, outcome=outcome)
        progress.advance(f"{request.op.op} {side}: {exc}")
        return SideResult(outcome=outcome, ir=_EMPTY_IR, preflight=str(exc))
    append_status(campaign, round_no=round_no, op=request.op.op, side=side,
                  switch_value=switch_value, outcome=outcome)
    ir = summarize(outcome.cell_dir / TTGIR_DIR)
    state = "TIMEOUT" if outcome.timed_out else f"rc={outcome.rc}"
    progress.advance(f"{request.op.op} {f'r{round_no:02d} ' if round_no else ''}{side} "
                     f"[{switch_value}] {state} rows={outcome.success_rows} "
                     f"ttgir={ir.files} {outcome.elapsed_s:.1f}s")
    return SideResult(outcome=outcome, ir=ir)


def screen_row(op: OpSpec, verdict: str, notes: list[str], a: SideResult, b: SideResult,
               identity: dict | None) -> dict:
    def elapsed(s: SideResult) -> str:
        return f"{s.outcome.elapsed_s:.1f}" if s.outcome else ""

    row = {
        "op": op.op, "op_file": op.op_file, "dtypes": ",".join(op.dtypes), "verdict": verdict,
        "rows_a": a.rows, "rows_b": b.rows, "kernels_a": a.ir.kernels, "kernels_b": b.ir.kernels,
        "convert_layouts_a": a.ir.convert_layouts, "convert_layouts_b": b.ir.convert_layouts,
        "ttgir_files_a": a.ir.files, "ttgir_files_b": b.ir.files,
        "fingerprint_a": a.ir.fingerprint or "", "fingerprint_b": b.ir.fingerprint or "",
        "elapsed_a": elapsed(a), "elapsed_b": elapsed(b),
        "timed_out": int(any(s.outcome is not None and s.outcome.timed_out for s in (a, b))),
        "notes": "; ".join(notes),
    }
    row.update({k: ("" if v is None else v) for k, v in caliber.caliber_of(identity).items()})
    return row


def write_screen_tables(campaign: Path, rows: list[dict]) -> None:
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        lines.append("\t".join(str(row.get(c, "")).replace("\t", " ") for c in COLUMNS))
    tmp = campaign / (SCREEN_TSV + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(campaign / SCREEN_TSV)
    tmp = campaign / (SCREEN_JSON + ".tmp")
    tmp.write_text(json.dumps({"schema": 1, "ops": rows}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(campaign / SCREEN_JSON)


def run_screen(host: PluginHost, provider: Provider, backend: Backend, device: str | None,
               sides: Sides, ops: list[OpSpec], settings: CellSettings, runs_root: Path,
               *, progress: Progress | None = None) -> tuple[Path, list[dict]]:
    campaign = new_campaign_dir(runs_root, "screen", sides.switch)
    write_campaign(campaign, kind="screen", sides=sides, backend=backend, provider=provider,
                   settings=settings, ops=ops, device=device)
    progress = progress or Progress(2 * len(ops), f"screen {sides.switch} on {campaign.name}")
    rows: list[dict] = []
    try:
        for op in ops:
            op_dir = campaign / op.op
            a_req = settings.request(op=op, backend=backend, device=device, out_dir=op_dir / "A",
                                     env=sides.env("A"), side="A", autotune_mode="record",
                                     replay_from=None)
            a = run_side(host, provider, a_req, campaign, round_no=0, side="A",
                         switch_value=sides.value("A"), progress=progress)
            if a.preflight or (a.outcome is not None and a.outcome.timed_out):
                b = SideResult(outcome=None, ir=_EMPTY_IR, preflight="not run: side A did not complete")
                progress.advance(f"{op.op} B: skipped (side A did not complete)")
            else:
                b_req = settings.request(op=op, backend=backend, device=device,
                                         out_dir=op_dir / "B", env=sides.env("B"), side="B",
                                         autotune_mode="replay", replay_from=op_dir / "A")
                b = run_side(host, provider, b_req, campaign, round_no=0, side="B",
                             switch_value=sides.value("B"), progress=progress)
            verdict, notes = screen_verdict(a, b, compile_only=settings.compile_only)
            identity = caliber.read_identity(op_dir / "A") if (op_dir / "A").is_dir() else None
            rows.append(screen_row(op, verdict, notes, a, b, identity))
            write_screen_tables(campaign, rows)
            progress.line(f"{op.op}: {verdict}" + (f" ({'; '.join(notes)})" if notes else ""))
    finally:
        progress.close()
    return campaign, rows


def latest_screen(runs_root: Path) -> Path | None:
    """The most recent screen campaign (by its creation stamp) under the runs root."""
    candidates = [p for p in Path(runs_root).glob("screen_*") if (p / SCREEN_JSON).is_file()]
    if not candidates:
        return None
    return max(candidates, key=lambda p: ((p / "campaign.json").stat().st_mtime, p.name))


def read_screen(campaign: Path) -> list[dict]:
    from zl_core.errors import BadInputError

    path = Path(campaign) / SCREEN_JSON
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["ops"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInputError(f"cannot read screen results {path}: {exc}; re-run the screen") from None
