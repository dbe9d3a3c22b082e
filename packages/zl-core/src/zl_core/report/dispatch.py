"""Entry point: the report of a campaign folder, its kind read from campaign.json."""

from __future__ import annotations

from pathlib import Path

from zl_core.errors import BadInputError

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
        return build_screen(path, meta=meta, allow_mismatch=allow_mismatch,
                            threshold_pct=threshold_pct)
    if kind in ROUNDS_KINDS:
        return build_rounds(path, meta=meta, allow_mismatch=allow_mismatch,
                            threshold_pct=threshold_pct)
    raise BadInputError(f"{path / CAMPAIGN_NAME}: unknown kind {kind!r}; expected screen, ab or aa")
