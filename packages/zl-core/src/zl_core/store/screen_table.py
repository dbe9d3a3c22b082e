"""A screen's table as written (``screen.json``): one row per operator, read back checked."""

from __future__ import annotations

import json
from pathlib import Path

from zl_core.errors import BadInputError

from .layout import CampaignLayout


def read_screen(campaign: Path) -> list[dict]:
    """The rows of a screen's ``screen.json``; a one-line error when it is unreadable or a row is not an operator's."""
    path = CampaignLayout(campaign).screen_json
    try:
        rows = list(json.loads(path.read_text(encoding="utf-8"))["ops"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInputError(f"cannot read screen results {path}: {exc}; re-run the screen") from None
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or not isinstance(row.get("op"), str) \
                or not isinstance(row.get("verdict", ""), str):
            raise BadInputError(f"corrupt screen results {path}: row {number} is not an operator's "
                                "row (an object with 'op' and 'verdict'); re-run the screen")
    return rows
