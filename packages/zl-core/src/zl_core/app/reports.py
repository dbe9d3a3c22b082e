"""Reports as functions: build a campaign's model (or a pair's), gate on its verdicts,
render it, keep its JSON beside its cells."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from zl_core import report
from zl_core.campaigns import kept_cells, state
from zl_core.foundation.atomic import write_json_atomic
from zl_core.foundation.errors import UsageError, VerdictGateError
from zl_core.report.render import FORMATS, render
from zl_core.store.layout import CampaignLayout, enclosing_campaign

from .seal import finish_campaign

#: What ``zl report --fail-on`` gates on: verdict kinds, ``any`` of them, or ``failed`` operators.
FAIL_ON = ("slower", "faster", "inconclusive", "any", "failed")

__all__ = [
    "FAIL_ON",
    "FORMATS",
    "campaign_report",
    "check_report_out",
    "compare_model",
    "finished_ab_report",
    "keep_report_json",
    "render",
    "report_model",
    "verdict_gate",
    "verdict_said",
]

log = logging.getLogger(__name__)


def campaign_report(campaign: Path, *, threshold_pct: float | None = None,
                    allow_mismatch: bool = False) -> dict:
    """The report model of a campaign folder (raises CaliberMismatchError, exit 4)."""
    return report.build(campaign, allow_mismatch=allow_mismatch, threshold_pct=threshold_pct)


def verdict_said(model: dict | None, op: str) -> str:
    """An operator's verdict as a rounds report decided it, with the estimate and interval
    it was decided on (``SLOWER -28.95% [-30.64%, -27.21%]``); "" for an operator the
    report has no verdict for."""
    found = next((o for o in ((model or {}).get("summary") or {}).get("operators") or ()
                  if o.get("op") == op), None)
    if found is None:
        return ""
    est = found.get("estimate")
    if not est:
        return str(found["verdict"])
    return (f"{found['verdict']} {est['estimate_pct']:+.2f}% "
            f"[{est['ci_low_pct']:+.2f}%, {est['ci_high_pct']:+.2f}%]")


def keep_report_json(campaign: Path, model: dict) -> Path:
    """Write the model as the campaign's ``report.json``; returns its path."""
    return write_json_atomic(CampaignLayout(campaign).report_json, model)


def check_report_out(out: Path | None) -> None:
    """A report is written outside every campaign folder: inside one it could replace
    the campaign's own files (campaign.json, a cell's results) and would change what
    the campaign says it measured."""
    if out is None:
        return
    inside = enclosing_campaign(Path(out).parent) or (
        Path(out) if (Path(out) / "campaign.json").is_file() else None)
    if inside is not None:
        raise UsageError(f"--out {out} lies inside campaign {inside}, whose files zl does not "
                         "overwrite; write the report outside it (e.g. --out report.html)")


def report_model(path: Path | None, pair: Sequence[Path] | None = None, *, allow_mismatch: bool = False,
                 threshold_pct: float | None = None, allow_incomplete: bool = False) -> dict:
    """The model of a campaign folder or of one A/B ``pair`` of cells (one of the two);
    an interrupted or unfinished campaign is refused (exit 6) unless ``allow_incomplete``."""
    if pair and path:
        raise UsageError("give either a campaign PATH or --ab A_DIR B_DIR, not both")
    if pair:
        return report.build_pair(pair[0], pair[1], allow_mismatch=allow_mismatch,
                                 threshold_pct=threshold_pct)
    if not path:
        raise UsageError("nothing to report: give a campaign folder, or --ab A_DIR B_DIR")
    if not allow_incomplete:
        state.check_complete(path)
        check_sealed(path)
    return report.build(path, allow_mismatch=allow_mismatch, threshold_pct=threshold_pct)


def compare_model(paths: Sequence[Path], *, allow_mismatch: bool = False,
                  threshold_pct: float | None = None, allow_incomplete: bool = False) -> dict:
    """The compare model of two or more A/B campaigns, each judged as ``zl report`` judges
    it (and refused as it refuses it: incomplete, changed since sealed, caliber mismatch)."""
    from zl_core.report.compare import build_compare

    if len(paths) < 2:
        raise UsageError("zl compare takes two or more A/B campaign folders")
    if len({Path(p).resolve() for p in paths}) < len(paths):
        raise UsageError("zl compare: a campaign is given twice")
    models = []
    for path in paths:
        model = report_model(path, allow_mismatch=allow_mismatch, threshold_pct=threshold_pct,
                             allow_incomplete=allow_incomplete)
        if model["kind"] != "rounds":
            raise UsageError(f"zl compare takes A/B (or A/A) campaigns; {path} is a {model['kind']} "
                             "(zl report shows it)")
        models.append(model)
    return build_compare(models, [Path(p).name for p in paths])


def check_sealed(path: Path) -> None:
    """A sealed campaign (one that ran a frozen matrix) is reported only as it was sealed:
    whatever changed since its receipt is named, and the report refused (exit 6)."""
    import json

    from zl_core.foundation.errors import IncompleteCampaignError
    from zl_core.seal import receipts

    try:
        receipt = json.loads((Path(path) / receipts.RECEIPT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no receipt (not finished, or never sealed): check_complete has spoken
    if not (isinstance(receipt, dict) and receipt.get("frozen")):
        return
    changed = receipts.check(Path(path))
    if changed:
        shown = "; ".join(changed[:3]) + (f"; and {len(changed) - 3} more" if len(changed) > 3 else "")
        raise IncompleteCampaignError(
            f"sealed campaign {path} changed since its receipt was written ({shown}), so no verdict "
            "of it stands as sealed; report a copy from its archive, or pass --allow-incomplete to "
            "report its files as they are now")


def verdict_gate(model: dict, campaign: Path | None, fail_on: Sequence[str]) -> None:
    """Raise VerdictGateError (exit 5) when a kind of ``fail_on`` is present: ``failed``,
    an operator of ``campaign`` whose cells failed; the others, an operator or shape verdict."""
    failed = kept_cells.failed_ops(CampaignLayout(campaign)) if campaign and "failed" in fail_on else []
    if failed:
        raise VerdictGateError(f"--fail-on failed: {len(failed)} operator(s) failed: "
                               + ", ".join(failed[:10]) + (" ..." if len(failed) > 10 else ""))
    verdicts = [f for f in fail_on if f != "failed"]
    if not verdicts:
        return
    if model["kind"] != "rounds":
        log.warning("zl report: note: a %s report carries no FASTER/SLOWER/INCONCLUSIVE "
                    "verdicts, so --fail-on has nothing to gate", model["kind"])
    hits = report.gate_hits(model, verdicts)
    if hits:
        shown = "; ".join(hits[:5]) + (f"; and {len(hits) - 5} more" if len(hits) > 5 else "")
        raise VerdictGateError(f"--fail-on {','.join(verdicts)}: {len(hits)} verdict(s) "
                               f"present: {shown}")


def finished_ab_report(campaign: Path, threshold_pct: float | None) -> dict:
    """The report model of an A/B campaign that just ran, kept as its ``report.json``
    beside the cells, then its receipts written (a frozen campaign is sealed)."""
    with state.finishing(campaign, "zl ab"):
        model = campaign_report(campaign, threshold_pct=threshold_pct)
        keep_report_json(campaign, model)
        finish_campaign(campaign)
    return model
