"""Which two cells hold an operator's side A and side B TTGIR in a campaign folder.

A screen keeps ``<op>/A`` and ``<op>/B``; an A/B (or A/A) campaign ``<op>/rNN/A|B``,
of which round 1 is compared: every round replays round 1's configs, so its code
is the code that was timed. Folder names come from
:class:`zl_core.store.layout.CampaignLayout`.
"""

from __future__ import annotations

from pathlib import Path

from zl_core.foundation.errors import BadInputError
from zl_core.store.layout import CAMPAIGN_FILE, SIDES, CampaignLayout, op_of_folder
from zl_core.store.record import KINDS, SCREEN, read_campaign

FIRST_ROUND = 1


def resolve_campaign(text: str, runs_root: Path) -> Path:
    """A campaign folder from a path, or from a name under the runs root."""
    for candidate in (Path(text).expanduser(), Path(runs_root) / text):
        if (candidate / CAMPAIGN_FILE).is_file():
            return candidate.resolve()
    if Path(text).expanduser().is_dir():
        raise BadInputError(f"{text} has no {CAMPAIGN_FILE}; give a screen or A/B campaign folder")
    raise BadInputError(f"no campaign {text!r} (neither a folder nor a name under {runs_root}); "
                        "give a campaign folder, e.g. runs/screen_<switch>_<time>")


def cells_of(campaign: Path, op: str, kind: str) -> tuple[Path, Path] | None:
    """(A, B) cell folders of ``op``, or None when the campaign holds neither."""
    layout = CampaignLayout(campaign)
    round_no = 0 if kind == SCREEN else FIRST_ROUND
    a, b = (layout.cell_dir(op, side, round_no) for side in SIDES)
    return (a, b) if a.is_dir() or b.is_dir() else None


def campaign_ops(campaign: Path, kind: str) -> list[str]:
    """Operators with a cell folder in the campaign, sorted."""
    return sorted(op_of_folder(p.name) for p in Path(campaign).iterdir()
                  if p.is_dir() and cells_of(campaign, op_of_folder(p.name), kind))


def op_cells(campaign: Path, op: str) -> tuple[Path, Path]:
    """(side A cell, side B cell) of ``op``; a one-line error naming the known operators."""
    kind = read_campaign(campaign).kind
    if kind not in KINDS:
        raise BadInputError(f"{Path(campaign) / CAMPAIGN_FILE}: unknown kind {kind!r}; "
                            f"expected one of {', '.join(KINDS)}")
    if "/" in op or "\\" in op or op in ("", ".", ".."):
        raise BadInputError(f"{op!r} is not an operator name")
    cells = cells_of(campaign, op, kind)
    if cells is None:
        known = campaign_ops(campaign, kind)
        raise BadInputError(f"no operator {op!r} in {Path(campaign).name}; its operators: "
                            f"{', '.join(known) or 'none'}")
    return cells
