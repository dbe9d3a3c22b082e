"""Which benchmark row is being measured right now.

FlagGems' ``run`` measures one row per input its ``get_input_iter`` yields
(latency_base, then latency). The shapes plugin ticks this clock each time an
input is produced; the timing plugin tags every timed call with the current
row; the results plugin maps printed rows back to those calls. One process runs
one benchmark at a time, so a module-level clock is enough.
"""

from __future__ import annotations

import attrs


@attrs.define
class RowClock:
    seq: int = 0  # rows begun so far in this process; 0 = none yet
    size_detail: str | None = None
    label: str | None = None

    def begin(self, size_detail: str | None, label: str | None) -> int:
        self.seq += 1
        self.size_detail = size_detail
        self.label = label
        return self.seq


CLOCK = RowClock()


def reset() -> None:
    CLOCK.seq = 0
    CLOCK.size_detail = None
    CLOCK.label = None
