"""A row of ``status.tsv``: one finished cell, as the table holds it.

The columns stay text, as written: a damaged row still reads, and each reader decides
what a value it cannot parse means (the typed views below answer None for it).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

COLUMNS = ("finished", "round", "op", "side", "switch_value", "rc", "elapsed_s", "timed_out",
           "success_rows", "failed_rows", "replay_fallback", "no_graph", "poisoned",
           "start", "end", "cell", "flags", "device", "stalled")
#: Columns every row has; ``device`` and ``stalled`` came later (older campaigns read as "").
LATER = ("device", "stalled")
REQUIRED = tuple(c for c in COLUMNS if c not in LATER)
#: A cell of a campaign: (operator, round, side); round 0 is a screen's pair.
CellKey = tuple[str, int, str]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@attrs.frozen(kw_only=True)
class StatusRow:
    """One line of status.tsv, its columns by name (:data:`COLUMNS`)."""

    finished: str
    round: str
    op: str
    side: str
    switch_value: str
    rc: str
    elapsed_s: str
    timed_out: str
    success_rows: str
    failed_rows: str
    replay_fallback: str
    no_graph: str
    poisoned: str
    start: str
    end: str
    cell: str
    flags: str
    device: str = ""
    stalled: str = ""

    @classmethod
    def from_dict(cls, row: Mapping[str, str | None]) -> StatusRow | None:
        """The row of a line read by column name; None for a line cut short (a writer
        killed mid-row leaves one without its last required columns)."""
        if any(row.get(column) is None for column in REQUIRED):
            return None
        return cls(**{column: str(row.get(column) or "") for column in COLUMNS})

    def to_dict(self) -> dict[str, str]:
        return {column: getattr(self, column) for column in COLUMNS}

    @property
    def round_no(self) -> int | None:
        try:
            return int(self.round)
        except ValueError:
            return None

    @property
    def key(self) -> CellKey | None:
        """(operator, round, side); None when the round is not a number."""
        round_no = self.round_no
        return None if round_no is None else (self.op, round_no, self.side)

    @property
    def start_s(self) -> float | None:
        return _number(self.start)

    @property
    def end_s(self) -> float | None:
        return _number(self.end)

    @property
    def elapsed(self) -> float | None:
        return _number(self.elapsed_s)

    @property
    def failed(self) -> bool:
        """The cell ended with an error or ran out of time."""
        return self.rc != "0" or self.timed_out == "1"

    @property
    def flag_list(self) -> list[str]:
        return [flag for flag in self.flags.split(",") if flag]
