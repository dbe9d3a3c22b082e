"""``--replay-root SCREEN``: re-measure operators against an earlier screen's recorded configs.

Every cell of the new campaign replays what the screen's side A recorded for its
operator (``CellSettings.replay_root``), so the new numbers are taken under the configs
the earlier ones were. What would make that false is refused here, on one line, before
any cell runs: a folder that is no screen, an IR-only screen (it tuned nothing), another
backend's records, an operator the screen did not record.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import BadInputError, UsageError
from zl_core.interface import caliber
from zl_core.interface.opspec import OpSpec
from zl_core.store import record
from zl_core.store.layout import CampaignLayout, CellLayout
from zl_core.store.record import read_campaign

from .options import Lanes, Measurement


def check_replay_root(measure: Measurement, lanes: Lanes, backend: Backend,
                      ops: Sequence[OpSpec]) -> Path | None:
    """The screen folder every cell will replay from (resolved), None without
    ``--replay-root``; raises UsageError (exit 2) naming what is wrong and what to do."""
    if measure.replay_root is None:
        return None
    given = Path(measure.replay_root).expanduser()
    flag = f"--replay-root {given}"
    if measure.compile_only:
        raise UsageError(f"{flag}: compile-only cells compile every config and replay none; "
                         "drop --replay-root or --compile-only")
    if lanes.scheduler:
        raise UsageError(f"{flag}: the records are read from this host's folder, which zl workers "
                         "do not have; drop --scheduler (run on this host's --devices)")
    if not given.is_dir():
        raise UsageError(f"{flag}: no such folder; name a screen campaign (runs/screen_...)")
    layout = CampaignLayout(given.resolve())
    if not layout.campaign_file.is_file():
        raise UsageError(f"{flag} is no campaign (it has no campaign.json); name a screen "
                         "campaign (runs/screen_...)")
    try:
        meta = read_campaign(layout.root)
    except (UsageError, BadInputError) as exc:
        raise UsageError(f"{flag}: {exc}") from None
    if meta.kind != record.SCREEN:
        raise UsageError(f"{flag} is {'an' if meta.kind[0] in 'aeiou' else 'a'} {meta.kind} "
                         "campaign; the configs to replay are recorded by a screen's side A: "
                         "name a screen campaign (runs/screen_...)")
    if meta.compile_only:
        raise UsageError(f"{flag} is an IR-only screen: its cells tuned nothing and recorded no "
                         "configs; name a screen that ran on a device")
    if meta.backend and meta.backend != backend.name:
        raise UsageError(f"{flag} recorded its configs on {meta.backend}, this campaign runs on "
                         f"{backend.name}; a config tuned for one backend is no pin on another")
    missing = [op.op for op in ops if not _recorded(layout.cell_dir(op.op, "A"))]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise UsageError(f"{flag} has no finished recording side A for {shown}; re-measure only "
                         f"operators that screen recorded (its screen.tsv lists them), or screen "
                         "them first")
    return layout.root


def _recorded(cell_dir: Path) -> bool:
    """A cell that finished recording its autotune picks."""
    if not CellLayout(cell_dir).autotune_records.is_dir():
        return False
    try:
        identity = caliber.read_identity(cell_dir)
    except BadInputError:
        return False
    return (identity is not None and identity.autotune_mode == "record" and identity.finished
            and not identity.interrupted and identity.rc == 0)
