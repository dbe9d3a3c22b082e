"""``campaign.json``: what a campaign was asked to do, written before its first cell.

Kinds: ``screen``, ``ab`` (A/B rounds) and ``aa`` (A/A rounds: both sides run side
A's environment). Campaigns written before the ``aa`` kind existed say ``ab`` with
``"aa": true``; :func:`is_aa` reads both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from zl_core.atomic import write_json_atomic
from zl_core.errors import BadInputError
from zl_core.stamps import utc_stamp

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
            "created": utc_stamp()}
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
    for field, (ok, expected) in _FIELDS.items():
        if field in data and data[field] is not None and not ok(data[field]):
            raise BadInputError(f"corrupt {file}: '{field}' is {json.dumps(data[field])[:60]}, "
                                f"expected {expected}; re-run the campaign or restore the file")
    return data


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _config(value: object) -> bool:
    """The configuration file a campaign took options from (``zl_core.config_file``)."""
    return (isinstance(value, dict) and isinstance(value.get("path"), str)
            and isinstance(value.get("sha256"), str)
            and re.fullmatch(r"[0-9a-f]{64}", value["sha256"]) is not None
            and isinstance(value.get("values"), dict) and all(isinstance(k, str) for k in value["values"])
            and _names(value.get("overridden")))


#: The fields zl reads back from campaign.json, and what each must be.
_FIELDS = {
    "kind": (lambda v: isinstance(v, str), "a campaign kind"),
    "ops": (_names, "a list of operator specs"),
    "controls": (_names, "a list of operator names"),
    "rounds": (lambda v: _count(v) or v == "auto", "a number of rounds or 'auto'"),
    "max_rounds": (_count, "a number of rounds"),
    "threshold_pct": (_number, "a percentage"),
    "switch": (lambda v: isinstance(v, str), "a switch name"),
    "state": (lambda v: isinstance(v, str), "a campaign state"),
    "options": (lambda v: isinstance(v, dict), "the recorded arguments"),
    "round_order": (lambda v: isinstance(v, str), "a round order"),
    # Optional: campaigns written before configuration files existed have none.
    "config": (_config, "the configuration file used: path, sha256, values, overridden"),
}
