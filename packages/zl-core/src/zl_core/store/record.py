"""``campaign.json``: what a campaign was asked to do, written before its first cell.

Kinds: ``screen``, ``ab`` (A/B rounds) and ``aa`` (A/A rounds: both sides run side
A's environment). Campaigns written before the ``aa`` kind existed say ``ab`` with
``"aa": true``; :attr:`CampaignRecord.is_aa` reads both.

:class:`CampaignRecord` is the one reading of the file: every key zl writes is a typed
field (None: the file has no such key), keys of later versions are kept in ``unknown``,
and the file's key order in ``key_order``, so that rewriting a record (``state.mark``)
changes only the fields it sets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import attrs

from zl_core.foundation.atomic import write_json_atomic
from zl_core.foundation.errors import BadInputError
from zl_core.foundation.small_files import read_small
from zl_core.foundation.stamps import utc_stamp

from .layout import CAMPAIGN_FILE, REPICK, CampaignLayout

SCREEN = "screen"
AB = "ab"
AA = "aa"
ROUNDS_KINDS = (AB, AA)
KINDS = (SCREEN, AB, AA)
SCHEMA = 1


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _config(value: object) -> bool:
    """The configuration file a campaign took options from (``zl_core.cli._config_file``)."""
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
    "retuned": (lambda v: isinstance(v, bool), "true or false"),
    # Optional: campaigns written before configuration files existed have none.
    "config": (_config, "the configuration file used: path, sha256, values, overridden"),
    "device_processes": (lambda v: v is None or isinstance(v, dict),
                         "the processes found on its devices, by device"),
}


def _names_or_none(value: list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen(kw_only=True)
class CampaignRecord:
    """One campaign.json. Fields are declared in the order a new campaign writes them;
    ``state.mark`` appends pid, host, reason, state and state_changed in that order."""

    schema: int | None = SCHEMA
    kind: str
    # The sides (switches.Sides.to_json).
    switch: str | None = None
    a_value: str | None = None
    b_value: str | None = None
    a_env: Mapping[str, str] | None = None
    b_env: Mapping[str, str] | None = None
    aa: bool | None = None  # campaigns from before the ``aa`` kind
    backend: str | None = None
    device: str | None = None
    suite: str | None = None
    # The cells' settings (campaigns.settings.CellSettings.to_json).
    source: str | None = None
    sources: list | None = None  # zl_core.interface.sources.Sources.to_json
    compile_only: bool | None = None
    target: str | None = None
    level: str | None = None
    timer: str | None = None
    start: str | None = None
    ops: tuple[str, ...] | None = attrs.field(default=None, converter=_names_or_none)
    # An A/B or A/A campaign's plan.
    rounds: int | str | None = None
    max_rounds: int | None = None
    controls: tuple[str, ...] | None = attrs.field(default=None, converter=_names_or_none)
    screen: str | None = None
    threshold_pct: float | None = None
    allow_no_ir_diff: bool | None = None
    round_order: str | None = None
    retuned: bool | None = None  # side R ran beside A and B (zl ab --retuned); absent: it did not
    # What --resume continues with (app.lanes), and the configuration file used.
    options: Mapping[str, object] | None = None
    devices: list[str] | None = None
    scheduler: str | None = None
    config: Mapping[str, object] | None = None
    #: Other processes found on the campaign's devices when it started, device -> list of
    #: {pid, name, used_mib}, kept as a condition of its measurements (--other-processes record).
    device_processes: Mapping[str, object] | None = None
    created: str | None = None
    # Its state, rewritten as it runs (campaigns.state.mark).
    pid: int | None = None
    host: str | None = None
    reason: str | None = None
    state: str | None = None
    state_changed: str | None = None
    unknown: Mapping[str, object] = attrs.field(factory=dict)
    key_order: tuple[str, ...] = ()

    @property
    def is_aa(self) -> bool:
        """Whether the campaign's cells all ran side A's environment (an A/A control)."""
        return self.kind == AA or (self.kind == AB and bool(self.aa))

    @property
    def is_rounds(self) -> bool:
        return self.kind in ROUNDS_KINDS

    def side_value(self, side: str) -> str:
        """The switch's value on ``side`` ("A" or "B"; a side of A's environment or of B's),
        "" where none is recorded."""
        value = self.a_value if side in ("A", REPICK) else self.b_value
        return "" if value is None else str(value)

    @classmethod
    def from_json(cls, data: object, *, file: Path | str = CAMPAIGN_FILE) -> CampaignRecord:
        """Read a campaign.json's object, every field zl reads checked; a one-line
        :class:`BadInputError` naming ``file`` when one is wrong."""
        if not isinstance(data, dict) or "kind" not in data:
            raise BadInputError(f"corrupt {file}: no 'kind'")
        for field, (ok, expected) in _FIELDS.items():
            if field in data and data[field] is not None and not ok(data[field]):
                raise BadInputError(f"corrupt {file}: '{field}' is {json.dumps(data[field])[:60]}, "
                                    f"expected {expected}; re-run the campaign or restore the file")
        known = {key: value for key, value in data.items() if key in _DATA_FIELDS}
        unknown = {key: value for key, value in data.items() if key not in _DATA_FIELDS}
        return cls(**known, unknown=unknown, key_order=tuple(data))

    def to_json(self) -> dict:
        """The object to write: the keys it was read with, in their order, then the
        fields set since (in declaration order), then keys of later versions."""
        values = {name: getattr(self, name) for name in _DATA_FIELDS}
        out: dict = {}
        for key in self.key_order:
            if key in values:
                out[key] = _plain(values[key])
            elif key in self.unknown:
                out[key] = self.unknown[key]
        for key, value in values.items():
            if key not in out and value is not None:
                out[key] = _plain(value)
        for key, value in self.unknown.items():
            out.setdefault(key, value)
        return out


_DATA_FIELDS = tuple(f.name for f in attrs.fields(CampaignRecord) if f.name not in ("unknown", "key_order"))


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def write_campaign(layout: CampaignLayout, **fields: object) -> CampaignRecord:
    """Write ``campaign.json`` (schema, ``fields``, then the creation stamp); returns what was written."""
    if fields.get("kind") not in KINDS:
        raise ValueError(f"unknown campaign kind {fields.get('kind')!r}")
    strange = sorted(set(fields) - set(_DATA_FIELDS))
    if strange:
        raise ValueError(f"campaign.json has no field {', '.join(strange)}")
    written = CampaignRecord.from_json({"schema": SCHEMA, **fields, "created": utc_stamp()},
                                       file=layout.campaign_file)
    write_json_atomic(layout.campaign_file, written.to_json())
    return written


#: campaign.json records a campaign's options and plan: far smaller than this.
MAX_CAMPAIGN_BYTES = 16 << 20


def read_campaign(path: Path) -> CampaignRecord:
    """A campaign folder's ``campaign.json``; a one-line error when it is missing or corrupt."""
    file = Path(path) / CAMPAIGN_FILE
    raw = read_small(file, MAX_CAMPAIGN_BYTES, hint=f"is {path} a campaign folder?")
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError too
        raise BadInputError(f"corrupt {file}: {exc}") from None
    except RecursionError:  # nested deeper than any campaign.json zl writes
        raise BadInputError(f"corrupt {file}: nested too deeply to be a campaign record") from None
    return CampaignRecord.from_json(data, file=file)
