"""The cells a campaign keeps: which are finished, where they ran, and setting aside
those a resume cannot keep (half-written, or of an operator that moved to another card).

A cell is *finished* when its identity carries the ``finished`` stamp that
:func:`zl_core.cells.cell.run_cell` writes last (an interrupted cell carries
``interrupted`` instead).
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

from zl_core.cells.cell import CellOutcome
from zl_core.foundation.atomic import leftover_of
from zl_core.foundation.stamps import folder_stamp
from zl_core.interface import caliber
from zl_core.store.layout import CampaignLayout, CellLayout

ASIDE_DIR = ".aside"


def finished(cell_dir: Path) -> bool:
    identity = caliber.read_identity(cell_dir) if Path(cell_dir).is_dir() else None
    return identity is not None and identity.finished and not identity.interrupted


def kept_outcome(cell_dir: Path) -> CellOutcome | None:
    """The outcome of a cell finished before (resume keeps it), None when it must run."""
    if not finished(cell_dir):
        return None
    identity = caliber.read_identity(cell_dir) or caliber.CellIdentity()
    end = CellLayout(cell_dir).identity.stat().st_mtime
    elapsed = identity.elapsed_s or 0.0
    return CellOutcome(cell_dir=Path(cell_dir), rc=identity.rc or 0, timed_out=identity.timed_out,
                       stalled=identity.stalled, elapsed_s=elapsed, start=end - elapsed, end=end,
                       markers=dict(identity.markers), success_rows=identity.success_rows,
                       failed_rows=identity.failed_rows, rows_error=identity.rows_error or "",
                       skips=identity.skips)


def _cell_dirs(root: Path) -> Iterator[Path]:
    """Every folder under ``root`` that a cell wrote: it holds run.log or an identity, or
    the sibling of an identity whose writer was killed before its rename (a kill in the
    cell's first moments leaves only that)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        cell = CellLayout(dirpath)
        if (cell.log.name in filenames or cell.identity.name in filenames
                or any(leftover_of(cell.identity.name, name) for name in filenames)):
            dirnames[:] = []
            yield Path(dirpath)


def set_aside_unfinished(layout: CampaignLayout) -> list[Path]:
    """Move every half-written cell folder under ``.aside/<stamp>/``; returns where each went."""
    moved = []
    aside = layout.root / ASIDE_DIR / folder_stamp()
    for cell in sorted(_cell_dirs(layout.root)):
        if finished(cell):
            continue
        target = aside / cell.relative_to(layout.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(cell), str(target))
        moved.append(target)
    return moved


def failed_ops(layout: CampaignLayout) -> list[str]:
    """Operators whose last attempt at any cell failed: an error, a timeout or a preflight."""
    from zl_core.decisions.status import latest_by_cell, read_status

    failed = {op for (op, _, _), row in latest_by_cell(read_status(layout.root)).items()
              if row.failed or _rows_unreadable(layout.root / row.cell)}
    return sorted(failed)


def _rows_unreadable(cell_dir: Path) -> bool:
    """The cell ended rc 0 but its provider could not read its rows (identity ``rows_error``)."""
    identity = caliber.read_identity(cell_dir) if cell_dir.is_dir() else None
    return identity is not None and identity.rows_error is not None


class OperatorMoved(Exception):
    """A resumed operator must run a cell on another device or host than its kept cells
    ran on; ``cells`` are those kept cells, under ``op_dir``."""

    def __init__(self, op_dir: Path, cells: list[Path], where: str) -> None:
        super().__init__(f"kept cells ran on {where}")
        self.op_dir, self.cells, self.where = Path(op_dir), cells, where


def kept_elsewhere(op_dir: Path, device: str, host: str,
                   uuid: Callable[[], str | None] = lambda: None) -> tuple[list[Path], str]:
    """An operator's finished cells that ran on another device or host, and where.

    An operator's cells are compared with each other, so they must share one card: a
    resume whose lanes leave out the kept cells' device, or a Dask task that lands on
    another host, reruns the operator whole rather than mixing two cards. ``uuid()`` is
    the card's own id where the vendor's tool tells it (asked only when a kept cell has
    one): a campaign resumed on another machine of the same host name and device index
    (a rented card's image) is on another card all the same."""
    cells, where = [], ""
    card = functools.cache(uuid)  # asked once, and only of a kept cell that names its card
    for cell in sorted(_cell_dirs(op_dir)) if Path(op_dir).is_dir() else ():
        if not finished(cell):
            continue
        identity = caliber.read_identity(cell) or caliber.CellIdentity()
        their_device, their_host = identity.device or "", identity.host or ""
        their_uuid = identity.device_uuid or ""
        if (their_device and their_device != str(device)) or (their_host and their_host != host):
            cells.append(cell)
            where = f"device {their_device or '?'} of {their_host or '?'}"
        elif their_uuid and card() and their_uuid != card():
            cells.append(cell)
            where = f"card {their_uuid} (device {their_device or '?'} of {their_host or '?'})"
    return cells, where


def check_kept_here(op_dir: Path, device: str | None,
                    uuid: Callable[[], str | None] = lambda: None) -> None:
    """Raise :class:`OperatorMoved` when ``op_dir`` holds finished cells of another card."""
    if device is None:
        return  # the backend's default device: a serial lane, which runs a kept operator on its kept device
    cells, where = kept_elsewhere(op_dir, device, socket.gethostname(), uuid)
    if cells:
        raise OperatorMoved(op_dir, cells, where)


def set_aside_moved(moved: OperatorMoved) -> Path:
    """Move the kept cells of a moved operator under the campaign's ``.aside/``."""
    root = moved.op_dir.parent  # <campaign>/<op>/...
    aside = root / ASIDE_DIR / (folder_stamp() + "-moved")
    for cell in moved.cells:
        target = aside / Path(cell).relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(cell), str(target))
    return aside


def kept_device(layout: CampaignLayout, op: str) -> str | None:
    """The device an operator's finished cells ran on (a resumed operator stays there)."""
    op_dir = layout.op_dir(op)
    if not op_dir.is_dir():
        return None
    for cell in sorted(_cell_dirs(op_dir)):
        if finished(cell):
            device = (caliber.read_identity(cell) or caliber.CellIdentity()).device
            if device is not None:
                return device
    return None
