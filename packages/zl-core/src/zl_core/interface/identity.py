"""A cell's identity, ``run_identity.json``, as one frozen record, and the one place that
reads and writes the file.

The identity holds fields of several writers: the core's caliber fields and the cell's
lifecycle (its exit, its phases), the vendor's device fields, the provider's own, and
whatever the cell's plugins add. :class:`CellIdentity` keeps every field as written (so a
record read and written back loses nothing, and a field of a later version survives) and
gives the fields the core decides on typed: an identity written before a field existed
reads that field as absent (None, False or empty), never as an error. The caliber fields
are a table by name (:mod:`zl_core.interface.caliber`), read through the mapping.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from zl_core.foundation.atomic import write_json_atomic
from zl_core.foundation.errors import BadInputError

IDENTITY_NAME = "run_identity.json"
#: The cell's phases as the orchestrator placed them, and the cell's own record of them
#: (the keys :mod:`zl_core.interface.phases` names ``KEY`` and ``CELL_KEY``).
PHASES_KEY, CELL_PHASES_KEY = "phases", "cell_phases"


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _count(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


@attrs.frozen
class CellIdentity(Mapping[str, object]):
    """One cell's identity: every field as the file holds it (a read-only mapping), with
    typed views of what the core decides on."""

    fields: Mapping[str, object] = attrs.field(factory=dict, converter=lambda d: dict(d))

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> CellIdentity:
        return cls(dict(data))

    def to_json(self) -> dict[str, object]:
        return dict(self.fields)

    def merged(self, updates: Mapping[str, object]) -> CellIdentity:
        """This identity with ``updates`` written over it."""
        return CellIdentity({**self.fields, **updates})

    def filled(self, updates: Mapping[str, object]) -> CellIdentity:
        """This identity with the fields of ``updates`` it does not hold yet (absent or null)."""
        return self.merged({k: v for k, v in updates.items() if self.fields.get(k) is None})

    # -- the mapping: every field as written ---------------------------------------------
    def __getitem__(self, key: str) -> object:
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    # -- where and by whom the cell ran --------------------------------------------------
    @property
    def host(self) -> str | None:
        return _text(self.fields.get("host"))

    @property
    def device(self) -> str | None:
        """The device as the user names it (older identities wrote it as a number)."""
        return _text(self.fields.get("device"))

    @property
    def device_uuid(self) -> str | None:
        return _text(self.fields.get("device_uuid"))

    @property
    def provider(self) -> str | None:
        """The suite whose provider built the cell (and reads its rows)."""
        return _text(self.fields.get("provider"))

    @property
    def autotune_mode(self) -> str | None:
        return _text(self.fields.get("autotune_mode"))

    @property
    def compile_only(self) -> bool:
        return bool(self.fields.get("compile_only"))

    # -- how the cell ended --------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """The orchestrator wrote the cell's end (a cell cut short has no such field)."""
        return bool(self.fields.get("finished"))

    @property
    def interrupted(self) -> bool:
        return bool(self.fields.get("interrupted"))

    @property
    def rc(self) -> int | None:
        value = self.fields.get("rc")
        try:
            return None if value is None or isinstance(value, bool) else int(str(value))
        except ValueError:
            return None

    @property
    def timed_out(self) -> bool:
        return bool(self.fields.get("timed_out"))

    @property
    def stalled(self) -> bool:
        return bool(self.fields.get("stalled"))

    @property
    def elapsed_s(self) -> float | None:
        value = self.fields.get("elapsed_s")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @property
    def success_rows(self) -> int:
        return _count(self.fields.get("success_rows"))

    @property
    def failed_rows(self) -> int:
        return _count(self.fields.get("failed_rows"))

    @property
    def rows_error(self) -> str | None:
        """Why the cell's rows could not be read (None: they could)."""
        return _text(self.fields.get("rows_error"))

    @property
    def skips(self) -> tuple[str, ...]:
        """The skips the benchmark itself made at run time."""
        value = self.fields.get("skips")
        return tuple(str(s) for s in value) if isinstance(value, list | tuple) else ()

    @property
    def markers(self) -> dict[str, int]:
        """The marker counts of the cell's output ({} where none were counted)."""
        value = self.fields.get("markers")
        return {str(k): _count(v) for k, v in value.items()} if isinstance(value, dict) else {}

    # -- where the cell's time went (zl_core.interface.phases) ----------------------------
    @property
    def phases(self) -> Mapping[str, object] | None:
        value = self.fields.get(PHASES_KEY)
        return value if isinstance(value, Mapping) else None

    @property
    def cell_phases(self) -> Mapping[str, object] | None:
        value = self.fields.get(CELL_PHASES_KEY)
        return value if isinstance(value, Mapping) else None


def read_identity(cell_dir: Path) -> CellIdentity | None:
    """The cell's identity, or None when absent. Corrupt JSON raises BadInputError."""
    identity_file = Path(cell_dir) / IDENTITY_NAME
    if not identity_file.is_file():
        return None
    try:
        data = json.loads(identity_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInputError(f"corrupt run identity {identity_file}: {exc}; re-run that cell") from None
    if not isinstance(data, dict):
        raise BadInputError(f"corrupt run identity {identity_file}: not a JSON object; re-run that cell")
    return CellIdentity.from_json(data)


def write_identity(cell_dir: Path, identity: Mapping[str, object]) -> Path:
    """Write atomically so a reader never sees half a file."""
    fields = identity.to_json() if isinstance(identity, CellIdentity) else dict(identity)
    return write_json_atomic(Path(cell_dir) / IDENTITY_NAME, fields, sort_keys=True)


def merge_identity(cell_dir: Path, updates: Mapping[str, object]) -> CellIdentity:
    """Read, update and rewrite the identity (used during and after the run)."""
    merged = (read_identity(cell_dir) or CellIdentity()).merged(updates)
    write_identity(cell_dir, merged)
    return merged


def fill_identity(cell_dir: Path, updates: Mapping[str, object]) -> CellIdentity:
    """Merge only the fields the identity does not hold yet (absent or null).

    Each field has one writer: the core and the provider write theirs before the
    cell starts; what the cell process adds fills what only it can know (library
    versions, a device name no vendor tool gave) and, in a cell started by hand
    without an identity, everything it records.
    """
    current = read_identity(cell_dir) or CellIdentity()
    filled = current.filled(updates)
    if filled != current:
        write_identity(cell_dir, filled)
    return filled
