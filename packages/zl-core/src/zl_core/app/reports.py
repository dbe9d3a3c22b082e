"""Reports as functions: build a campaign's model, keep its JSON beside its cells."""

from __future__ import annotations

from pathlib import Path

from zl_core import report
from zl_core.atomic import write_json_atomic
from zl_core.errors import UsageError
from zl_core.store.layout import CampaignLayout, enclosing_campaign


def campaign_report(campaign: Path, *, threshold_pct: float | None = None,
                    allow_mismatch: bool = False) -> dict:
    """The report model of a campaign folder (raises CaliberMismatchError, exit 4)."""
    return report.build(campaign, allow_mismatch=allow_mismatch, threshold_pct=threshold_pct)


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
