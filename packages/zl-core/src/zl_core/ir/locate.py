"""Which two cells hold an operator's side A and side B TTGIR in a campaign folder.

A screen keeps ``<op>/A`` and ``<op>/B``; an A/B campaign ``<op>/rNN/A|B``, of which
round 1 is compared (every round replays round 1's configs, so its code is the
code that was timed).
"""

from __future__ import annotations

from pathlib import Path

from zl_core.campaign import CAMPAIGN_NAME, read_campaign
from zl_core.errors import BadInputError

SIDES = ("A", "B")
FIRST_ROUND = "r01"


def resolve_campaign(text: str, runs_root: Path) -> Path:
    """A campaign folder from a path, or from a name under the runs root."""
    for candidate in (Path(text).expanduser(), Path(runs_root) / text):
        if (candidate / CAMPAIGN_NAME).is_file():
            return candidate.resolve()
    if Path(text).expanduser().is_dir():
        raise BadInputError(f"{text} has no {CAMPAIGN_NAME}; give a screen or A/B campaign folder")
    raise BadInputError(f"no campaign {text!r} (neither a folder nor a name under {runs_root}); "
                        "give a campaign folder, e.g. runs/screen_<switch>_<time>")


def campaign_ops(campaign: Path) -> list[str]:
    """Operators with a cell folder in the campaign, sorted."""
    return sorted(p.name for p in Path(campaign).iterdir()
                  if p.is_dir() and _cells_of(campaign, p.name, read_kind(campaign)))


def read_kind(campaign: Path) -> str:
    return str(read_campaign(campaign).get("kind"))


def _cells_of(campaign: Path, op: str, kind: str) -> tuple[Path, Path] | None:
    base = Path(campaign) / op
    if kind == "ab":
        base = base / FIRST_ROUND
    cells = tuple(base / s for s in SIDES)
    return cells if any(c.is_dir() for c in cells) else None  # type: ignore[return-value]


def op_cells(campaign: Path, op: str) -> tuple[Path, Path]:
    """(side A cell, side B cell) of ``op``; a one-line error naming the known operators."""
    kind = read_kind(campaign)
    if kind not in ("screen", "ab"):
        raise BadInputError(f"{campaign / CAMPAIGN_NAME}: unknown kind {kind!r}; expected screen or ab")
    if "/" in op or op in ("", ".", ".."):
        raise BadInputError(f"{op!r} is not an operator name")
    cells = _cells_of(campaign, op, kind)
    if cells is None:
        known = campaign_ops(campaign)
        raise BadInputError(f"no operator {op!r} in {campaign.name}; its operators: "
                            f"{', '.join(known) or 'none'}")
    return cells
