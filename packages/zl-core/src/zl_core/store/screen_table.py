"""A screen's table as written (``screen.tsv``, ``screen.json``): one row per operator,
read back checked."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import attrs

from zl_core.foundation.errors import BadInputError
from zl_core.interface.caliber import ALL_FIELDS

from .layout import CampaignLayout

#: What a screen row says of its operator and its pair, before the cells' caliber fields.
OWN_COLUMNS = ("op", "op_file", "dtypes", "verdict", "rows_a", "rows_b", "kernels_a", "kernels_b",
               "convert_layouts_a", "convert_layouts_b", "convert_layouts_all_a",
               "convert_layouts_all_b", "launch_scope", "unmeasured_a", "unmeasured_b",
               "ttgir_files_a", "ttgir_files_b", "fingerprint_a", "fingerprint_b", "elapsed_a",
               "elapsed_b", "timed_out", "notes")
#: The columns of screen.tsv (and the keys of each row of screen.json).
COLUMNS = (*OWN_COLUMNS, *ALL_FIELDS)


@attrs.frozen(kw_only=True)
class ScreenRow:
    """One operator's row of screen.json. Values are kept as written (None: the row has
    no such key); the cells' caliber fields are in ``caliber``, keys of later versions in
    ``unknown``, and the row's key order in ``key_order`` so :meth:`to_dict` gives it back."""

    op: str
    op_file: str | None = None
    dtypes: str | None = None
    verdict: str = ""
    rows_a: int | None = None
    rows_b: int | None = None
    kernels_a: int | None = None
    kernels_b: int | None = None
    convert_layouts_a: int | None = None
    convert_layouts_b: int | None = None
    convert_layouts_all_a: int | None = None
    convert_layouts_all_b: int | None = None
    launch_scope: str | None = None
    unmeasured_a: str | None = None
    unmeasured_b: str | None = None
    ttgir_files_a: int | None = None
    ttgir_files_b: int | None = None
    fingerprint_a: str | None = None
    fingerprint_b: str | None = None
    elapsed_a: str | None = None
    elapsed_b: str | None = None
    timed_out: int | None = None
    notes: str | None = None
    caliber: Mapping[str, object] = attrs.field(factory=dict)
    unknown: Mapping[str, object] = attrs.field(factory=dict)
    key_order: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, row: object) -> ScreenRow | None:
        """The row of one entry of screen.json; None when it is not an operator's row (an
        object with a string ``op`` and, if any, a string ``verdict``)."""
        if not isinstance(row, dict) or not isinstance(row.get("op"), str) \
                or not isinstance(row.get("verdict", ""), str):
            return None
        return cls(**{k: v for k, v in row.items() if k in OWN_COLUMNS},
                   caliber={k: v for k, v in row.items() if k in ALL_FIELDS},
                   unknown={k: v for k, v in row.items() if k not in COLUMNS},
                   key_order=tuple(row))

    def to_dict(self) -> dict:
        """The row as screen.json holds it: its keys in their order."""
        values = {**{c: getattr(self, c) for c in OWN_COLUMNS}, **self.caliber, **self.unknown}
        order = self.key_order or (*OWN_COLUMNS, *self.caliber, *self.unknown)
        return {key: values[key] for key in order if key in values}

    def side(self, name: str, side: str) -> object:
        """A per-side column: ``side("unmeasured", "A")`` is ``unmeasured_a``."""
        return getattr(self, f"{name}_{side.lower()}")


def read_screen(campaign: Path) -> list[ScreenRow]:
    """The rows of a screen's ``screen.json``; a one-line error when it is unreadable or a row is not an operator's."""
    path = CampaignLayout(campaign).screen_json
    try:
        entries = list(json.loads(path.read_text(encoding="utf-8"))["ops"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInputError(f"cannot read screen results {path}: {exc}; re-run the screen") from None
    rows = []
    for number, entry in enumerate(entries, start=1):
        row = ScreenRow.from_dict(entry)
        if row is None:
            raise BadInputError(f"corrupt screen results {path}: row {number} is not an operator's "
                                "row (an object with 'op' and 'verdict'); re-run the screen")
        rows.append(row)
    return rows
