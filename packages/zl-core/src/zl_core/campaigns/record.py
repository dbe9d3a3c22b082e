"""``campaign.json``: what a campaign was asked to do, written before its first cell.

Kinds: ``screen``, ``ab`` (A/B rounds) and ``aa`` (A/A rounds: both sides run side
A's environment). Campaigns written before the ``aa`` kind existed say ``ab`` with
``"aa": true``; :func:`is_aa` reads both.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from zl_core.atomic import write_json_atomic
from zl_core.errors import BadInputError

from .layout import CAMPAIGN_FILE, CampaignLayout

SCREEN = "screen"
AB = "ab"
AA = "aa"
ROUNDS_KINDS = (AB, AA)
KINDS = (SCREEN, AB, AA)


def is_aa(meta: dict) -> bool:
    """Whether a campaign's cells all ran side A's environment (an A/A control)."""
    return meta.get("kind") == AA or (meta.get("kind") == AB and bool(meta.get("aa")))


def write_campaign(layout: CampaignLayout, **fields: object) -> dict:
    """Write ``campaign.json`` (schema, creation stamp, then ``fields``); returns what was written."""
    if fields.get("kind") not in KINDS:
        raise ValueError(f"unknown campaign kind {fields.get('kind')!r}")
    data = {"schema": 1, **fields,
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    write_json_atomic(layout.campaign_file, data)
    return data


def read_campaign(path: Path) -> dict:
    """A campaign folder's ``campaign.json``; a one-line error when it is missing or corrupt."""
    file = Path(path) / CAMPAIGN_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInputError(f"cannot read {file}: {exc.strerror}; is {path} a campaign folder?") from None
    except ValueError as exc:
        raise BadInputError(f"corrupt {file}: {exc}") from None
    if not isinstance(data, dict) or "kind" not in data:
        raise BadInputError(f"corrupt {file}: no 'kind'")
    return data
