"""Which executor runs a campaign: serial, local lanes, or a Dask scheduler.

The campaign code takes whatever :func:`choose` returns and never asks which it
is; :func:`concurrency` is the number of lanes that measure at the same time (a
caliber field: A/B timing on several lanes couples devices through the host's
power and cooling).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from zl_core.decisions.status import read_status
from zl_core.foundation.backend import Backend

from .executor import Executor, SerialExecutor
from .lanes import LanesExecutor

#: How many earlier campaigns lend their cell times to the longest-first order.
HISTORY = 20


def choose(backend: Backend, *, devices: Sequence[str] | None, scheduler: str | None,
           expected_s: dict[str, float] | None = None, per_device: int = 1,
           device: str | None = None, pipeline: int = 1) -> Executor:
    """Dask with a scheduler, lanes over ``devices`` (``per_device`` each, or ``pipeline``
    gated ones), else one cell after the other on ``device`` (None: the backend's default)."""
    if scheduler:
        from .dask_executor import DaskExecutor

        return DaskExecutor(scheduler)
    if devices:
        if pipeline > 1:
            return LanesExecutor(backend.name, list(devices), expected_s=expected_s,
                                 per_device=pipeline, gated=True)
        return LanesExecutor(backend.name, list(devices), expected_s=expected_s,
                             per_device=per_device)
    return SerialExecutor(device)


def concurrency(executor: Executor) -> int:
    return int(getattr(executor, "concurrency", 1))


def pipeline(executor: Executor) -> int:
    """Cells of one device in flight while one times (a caliber field; 1: none)."""
    return int(getattr(executor, "pipeline", 1))


def expected_times(runs_root: Path, kind: str) -> dict[str, float]:
    """Seconds each operator's cells took in the latest campaigns of ``kind`` (newest wins)."""
    campaigns = sorted(Path(runs_root).glob(f"{kind}_*"), key=lambda p: p.stat().st_mtime)[-HISTORY:]
    times: dict[str, float] = {}
    for campaign in campaigns:
        per_op: dict[str, float] = {}
        for row in read_status(campaign):
            if row.elapsed is not None:
                per_op[row.op] = per_op.get(row.op, 0.0) + row.elapsed
        times.update(per_op)
    return times
