"""A recording cell's autotune picks read back for the core's reports: the records of
:mod:`zl_flaggems.common.autotune_records`, each config shown as one line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zl_core.interface.contract import AUTOTUNE_RECORDS_DIR
from zl_core.interface.picks import Pick

from zl_flaggems.common.autotune_records import NotDecodable, decode_value, read_records


def config_text(data: Mapping) -> str:
    """A recorded config as one line: its kwargs, then the launch options and extras that
    are set (``BLOCK=64, num_warps=4``)."""
    parts = [f"{k}={_shown(v)}" for k, v in sorted((data.get("kwargs") or {}).items())]
    parts += [f"{k}={_shown(v)}" for k, v in data.items() if k not in ("kwargs", "pre_hook") and v is not None]
    return ", ".join(parts) or "(no parameters)"


def _shown(value: Any) -> str:
    try:
        return str(decode_value(value))
    except NotDecodable:
        return json.dumps(value, sort_keys=True)


def read_picks(cell_dir: Path) -> list[Pick] | None:
    """Every key's pick in ``cell_dir``'s records, with its sweep where one was timed; None
    when the cell kept no records."""
    folder = Path(cell_dir) / AUTOTUNE_RECORDS_DIR
    if not folder.is_dir():
        return None
    picks = []
    for tuner, data in read_records(folder).items():
        sweeps: Mapping[str, list] = data["sweeps"]
        for key, config in sorted(data["entries"].items()):
            sweep: list[tuple[str, float]] = [
                (config_text(e["config"]), float(e["ms"])) for e in sweeps.get(key, ())
                if isinstance(e, dict) and isinstance(e.get("config"), dict)
                and isinstance(e.get("ms"), (int, float))]
            picks.append(Pick(kernel=data["kernel"], tuner=tuner, key=key, config=config_text(config),
                              sweep=tuple(sorted(sweep, key=lambda c: c[1]))))
    return picks


class RecordedPicks:
    """Mixin for providers whose cells record through the autotune plugin: their
    :meth:`~zl_core.interface.provider.Provider.autotune_picks`."""

    def autotune_picks(self, cell_dir: Path) -> list[Pick] | None:
        return read_picks(cell_dir)
