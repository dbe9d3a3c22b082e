"""A campaign's state (running, interrupted, complete) and what resuming it needs.

``campaign.json`` records the state: ``running`` from the first cell, ``complete``
when every task ended, ``interrupted`` when a signal or an error stopped it. A
campaign whose orchestrator was killed outright stays ``running`` with a pid that
no longer exists; :func:`check_resumable` tells the two apart.

A cell is *finished* when its identity carries the ``finished`` stamp that
:func:`zl_core.cells.cell.run_cell` writes last (an interrupted cell carries
``interrupted`` instead). A resumed campaign keeps finished cells as they are and
moves every other cell folder aside, under ``.aside/<stamp>/``, then reruns it.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import attrs

from zl_core.campaigns.kept_cells import (
    ASIDE_DIR,
    _cell_dirs,
    finished,
    kept_device,
    kept_outcome,
    set_aside_unfinished,
)
from zl_core.cells.cell import CellDiskError
from zl_core.foundation import interrupts
from zl_core.foundation.atomic import write_json_atomic
from zl_core.foundation.errors import BadInputError, UsageError
from zl_core.foundation.stamps import utc_stamp
from zl_core.interface import caliber
from zl_core.interface.opspec import OpSpec
from zl_core.interface.sources import Sources
from zl_core.store import record
from zl_core.store.layout import CampaignLayout, op_of_folder
from zl_core.store.record import CampaignRecord, read_campaign

RUNNING, INTERRUPTED, COMPLETE = "running", "interrupted", "complete"
#: Every cell has ended; the campaign's tables, report, receipts and seal are being
#: written. Only the last step of that finish marks it complete (app.seal.finish_campaign),
#: so a finish cut short is resumed, never taken for a finished campaign.
FINISHING = "finishing"
#: Options a resumed campaign may change: where its cells run, not what they measure.
MAY_CHANGE = ("resume", "devices", "scheduler", "lock_timeout_s", "sweep_devices")


def _stamp() -> str:
    return utc_stamp()


def mark(layout: CampaignLayout, state: str, *, pid: int | None = None, host: str | None = None,
         reason: str | None = None) -> CampaignRecord:
    """Set ``state`` (and the process running it, or the reason it stopped, where given) in
    campaign.json; the rest of the record is kept."""
    meta = read_campaign(layout.root)
    marked = attrs.evolve(meta, pid=meta.pid if pid is None else pid, host=meta.host if host is None else host,
                          reason=meta.reason if reason is None else reason, state=state,
                          state_changed=_stamp())
    write_json_atomic(layout.campaign_file, marked.to_json())
    return marked


@contextlib.contextmanager
def tracked(layout: CampaignLayout, command: str) -> Iterator[None]:
    """``running`` for the duration of the block, then ``finishing`` (its finish marks it
    complete) or ``interrupted``."""
    mark(layout, RUNNING, pid=os.getpid(), host=socket.gethostname())
    try:
        yield
    except interrupts.Interrupted as exc:
        mark(layout, INTERRUPTED, reason=str(exc))
        raise interrupts.Interrupted(exc.signum, f"continue with: {command} --resume {layout.root}") from None
    except CellDiskError as exc:
        mark(layout, INTERRUPTED, reason=str(exc))
        raise exc.then(f"continue it with {command} --resume {layout.root} (finished cells are kept; "
                       "this one reruns)") from None
    except BaseException as exc:
        mark(layout, INTERRUPTED, reason=f"{type(exc).__name__}: {exc}".strip())
        raise
    mark(layout, FINISHING)


@contextlib.contextmanager
def finishing(campaign: Path, command: str) -> Iterator[None]:
    """A step of a campaign's finish: a signal in it leaves the campaign ``finishing``
    and says how to complete it (a resume writes the finish again, whole)."""
    hint = (f"its cells had ended and its results were being written; complete them with: "
            f"{command} --resume {campaign}")
    interrupts.finishing(hint)  # kept after this step, until the campaign is complete
    try:
        yield
    except interrupts.Interrupted as exc:
        raise interrupts.Interrupted(exc.signum, hint) from None


def state_of(meta: CampaignRecord) -> str:
    """A campaign's state; campaigns written before states existed count as complete."""
    return str(meta.state or COMPLETE)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:
        return True
    return True


def is_live(meta: CampaignRecord) -> bool:
    """Whether a process on this host is running the campaign now (resume would be refused)."""
    return (state_of(meta) in (RUNNING, FINISHING) and meta.host == socket.gethostname()
            and meta.pid is not None and _pid_alive(meta.pid) and meta.pid != os.getpid())


def finish_hint(path: Path, meta: CampaignRecord, command: str) -> str:
    """How to get an unfinished campaign finished, true for its state: resume it, or wait
    for the process that runs it now."""
    if is_live(meta):
        return f"it is still running (pid {meta.pid}); wait for it to end"
    return f"finish it with {command} --resume {path}"


def check_resumable(path: Path, kind: str) -> CampaignRecord:
    """campaign.json of a campaign ``--resume`` may continue, or a one-line refusal."""
    meta = read_campaign(path)
    if meta.kind not in ((record.AB, record.AA) if kind == record.AB else (kind,)):
        raise UsageError(f"{path} is a {meta.kind} campaign; resume it with "
                         f"zl {'screen' if meta.kind == record.SCREEN else 'ab'} --resume")
    state = state_of(meta)
    if state == COMPLETE:
        raise UsageError(f"campaign {path} is complete; nothing to resume (zl report {path})")
    if is_live(meta):
        raise UsageError(f"campaign {path} is still running (pid {meta.pid}); "
                         "stop it first or wait for it")
    if not meta.options:
        raise UsageError(f"campaign {path} does not record its arguments (written by an older zl); "
                         "start it anew")
    return meta


#: Option fields whose command-line spelling is not their name.
_SPELLED = {"timeout_s": "timeout", "stall_timeout_s": "stall-timeout", "lock_timeout_s": "lock-timeout", "threshold_pct": "threshold", "a_value": "a", "b_value": "b",
            "more_sources": "source", "force": "force-switch"}


def option_flag(name: str) -> str:
    """The command-line flag of an option field (``measure.timeout_s`` -> ``--timeout``)."""
    field = name.rsplit(".", 1)[-1]
    return "--" + _SPELLED.get(field, field).replace("_", "-")


def refuse_conflicts(recorded: dict[str, object], given: dict[str, object]) -> None:
    """Refuse options given anew that differ from the campaign's own, naming each."""
    differ = [f"{option_flag(name)} {given[name]!r} (campaign: {recorded.get(name)!r})"
              for name in sorted(given) if name.rsplit(".", 1)[-1] not in MAY_CHANGE
              and given[name] != recorded.get(name)]
    if differ:
        raise UsageError("--resume continues a campaign with its own arguments; these differ: "
                         + "; ".join(differ) + ". Drop them, or start a new campaign")


def incomplete(runs_root: Path, kind: str) -> list[Path]:
    """Campaigns of ``kind`` under the runs root that did not complete, newest first."""
    found = []
    for path in Path(runs_root).glob(f"{kind}_*"):
        try:
            meta = read_campaign(path)
        except UsageError:
            continue
        if state_of(meta) != COMPLETE:
            found.append(path)
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def planned_op(spec: str, meta: CampaignRecord) -> str:
    """The operator name of one of campaign.json's op specs (sources from ``meta``)."""
    sources = Sources.from_json(meta.sources) or Sources()
    try:
        return OpSpec.parse(spec, prefixes=sources.prefixes, default_source=sources.default_name).op
    except BadInputError:
        return spec.split(":", 1)[0]


def missing_ops(layout: CampaignLayout, meta: CampaignRecord) -> list[str]:
    """Operators of the plan with no finished cell, or with a cell left unfinished."""
    unfinished = {op_of_folder(cell.relative_to(layout.root).parts[0])
                  for cell in _cell_dirs(layout.root) if not finished(cell)}
    missing = []
    for spec in meta.ops or ():
        op = planned_op(str(spec), meta)
        op_dir = layout.op_dir(op)
        done = any(finished(cell) for cell in _cell_dirs(op_dir)) if op_dir.is_dir() else False
        if op in unfinished or not done:
            missing.append(op)
    return missing


def lost_cells(layout: CampaignLayout) -> list[str]:
    """Cells status.tsv lists whose folder or identity is gone, or whose identity says it
    was interrupted (identities from before the ``finished`` stamp count as ended)."""
    from zl_core.decisions.status import latest_by_cell, read_status

    lost = []
    for row in latest_by_cell(read_status(layout.root)).values():
        cell = row.cell
        if not cell:
            continue
        identity = caliber.read_identity(layout.root / cell) if (layout.root / cell).is_dir() else None
        if identity is None or identity.interrupted:
            lost.append(cell)
    return sorted(lost)


def check_complete(path: Path) -> None:
    """Refuse (exit 6) a report of a campaign that did not finish, naming what is missing."""
    from zl_core.foundation.errors import IncompleteCampaignError

    layout = CampaignLayout(Path(path))
    try:
        meta = read_campaign(layout.root)
    except UsageError:
        return  # not a campaign folder: the report says so itself
    current = state_of(meta)
    if current == COMPLETE:
        lost = lost_cells(layout)
        if lost:
            shown = ", ".join(lost[:10]) + (f" and {len(lost) - 10} more" if len(lost) > 10 else "")
            raise IncompleteCampaignError(
                f"campaign {layout.root} says complete, but {len(lost)} cell(s) its status.tsv lists "
                f"are missing or unfinished: {shown}. Its files changed after it ended, so no verdict "
                "of it stands; run it again, or pass --allow-incomplete to report what is left")
        return
    command = "zl screen" if meta.kind == record.SCREEN else "zl ab"
    hint = finish_hint(layout.root, meta, command)
    if current == FINISHING:
        raise IncompleteCampaignError(
            f"campaign {layout.root}: every cell ended, but its results (report, receipts, seal) "
            f"were not all written. {hint[0].upper()}{hint[1:]}, or pass --allow-incomplete to "
            "report what is there")
    missing = missing_ops(layout, meta)
    shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
    raise IncompleteCampaignError(
        f"campaign {layout.root} is {current}; {len(missing)} operator(s) unfinished"
        + (f": {shown}" if missing else "") + f". {hint[0].upper()}{hint[1:]}, "
        "or pass --allow-incomplete to report what finished")


def restore_status(layout: CampaignLayout, meta: CampaignRecord) -> int:
    """Append the status row of every finished cell that has none (the orchestrator was
    killed between the cell's last stamp and its row); returns how many were added."""
    from zl_core.decisions.status import append_status, read_status
    from zl_core.store.layout import REPICK, RETUNED, SIDES, parse_round

    listed = {row.cell for row in read_status(layout.root)}
    added = 0
    for cell in sorted(_cell_dirs(layout.root)):
        parts = cell.relative_to(layout.root).parts
        side = parts[-1]
        round_no = parse_round(parts[1]) if len(parts) == 3 else 0
        if side not in (*SIDES, RETUNED, REPICK) or round_no is None or layout.relative(cell) in listed:
            continue
        outcome = kept_outcome(cell)
        if outcome is None:
            continue
        append_status(layout.root, round_no=round_no, op=parts[0], side=side,
                      switch_value=meta.side_value(side),
                      outcome=outcome)
        added += 1
    return added


def reopen(layout: CampaignLayout) -> int:
    """Give the owner back write access to the files of a campaign whose finish was cut
    after its seal (the resume writes the finish again, seal included); returns how many."""
    count = 0
    for path in layout.root.rglob("*"):
        if path.is_file() and not path.is_symlink() and not path.stat().st_mode & 0o200:
            path.chmod(path.stat().st_mode | 0o200)
            count += 1
    return count


def prepare_resume(layout: CampaignLayout, ops: Iterable[str], say: Callable[[str], None]) -> dict[str, str]:
    """Ready a resumed campaign: half-written cells set aside, status rows of kept cells
    restored. Returns where each of ``ops`` with kept cells ran them (operator -> device):
    the executor runs it on that device where it has a lane there."""
    if state_of(read_campaign(layout.root)) == FINISHING:
        reopen(layout)
    aside = set_aside_unfinished(layout)
    restored = restore_status(layout, read_campaign(layout.root))
    say(f"resuming {layout.name}: {len(aside)} half-written cell(s) set aside "
        f"under {ASIDE_DIR}/ and rerun; finished cells kept"
        + (f" ({restored} status row(s) restored)" if restored else ""))
    kept = {op: kept_device(layout, op) for op in ops}
    return {op: device for op, device in kept.items() if device is not None}
