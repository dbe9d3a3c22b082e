"""Entry point: the report of a campaign folder, its kind read from campaign.json."""

from __future__ import annotations

from pathlib import Path

from zl_core.foundation.errors import BadInputError

from .rounds_report import build_rounds
from .screen_report import build_screen

# --------------------------------------------------------------------------- entry points


def build(path: Path, *, allow_mismatch: bool = False, threshold_pct: float | None = None) -> dict:
    """The report of a campaign folder, its kind read from campaign.json."""
    from zl_core.store.layout import CAMPAIGN_FILE as CAMPAIGN_NAME
    from zl_core.store.layout import CellLayout
    from zl_core.store.record import ROUNDS_KINDS, SCREEN, read_campaign

    path = Path(path)
    if not path.exists():
        raise BadInputError(f"{path} does not exist; give a campaign folder "
                            "(or two cell folders with --ab A_DIR B_DIR)")
    if not (path / CAMPAIGN_NAME).is_file():
        if CellLayout(path).wrote():
            raise BadInputError(f"{path} is a single cell; compare two cells with "
                                "'zl report --ab A_DIR B_DIR'")
        raise BadInputError(f"{path} has no {CAMPAIGN_NAME}; give a screen or A/B campaign "
                            "folder (or two cells with --ab A_DIR B_DIR)")
    meta = read_campaign(path)
    kind = meta.kind
    if kind == SCREEN:
        model = build_screen(path, meta=meta, allow_mismatch=allow_mismatch,
                             threshold_pct=threshold_pct)
    elif kind in ROUNDS_KINDS:
        model = build_rounds(path, meta=meta, allow_mismatch=allow_mismatch,
                             threshold_pct=threshold_pct)
    else:
        raise BadInputError(f"{path / CAMPAIGN_NAME}: unknown kind {kind!r}; expected screen, ab or aa")
    beside = _beside(meta.device_processes)
    if beside:  # a condition of every number below: said first
        model["notes"].insert(0, beside)
    return model


def _beside(found: object) -> str:
    """The note of a campaign that ran beside other processes (``--other-processes
    record``: campaign.json's ``device_processes``), "" for one that did not."""
    if not isinstance(found, dict) or not found:
        return ""
    said = "; ".join(
        f"device {device}: " + ", ".join(
            f"pid {p.get('pid')} {p.get('name') or '?'}" + (f" ({p['used_mib']} MiB)" if p.get("used_mib") else "")
            for p in processes if isinstance(p, dict))
        for device, processes in found.items() if isinstance(processes, list))
    return (f"ran beside other processes on its devices (--other-processes record): {said}; "
            "their work shared the device with the cells")

