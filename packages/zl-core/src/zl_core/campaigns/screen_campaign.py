"""A screen campaign: plan one pinned pair per operator, run the plan, write the tables."""

from __future__ import annotations

import logging
from pathlib import Path

import attrs

from zl_core.decisions.ir_verdict import SKIPPED
from zl_core.foundation.atomic import write_json_atomic, write_text_atomic
from zl_core.interface.opspec import OpSpec
from zl_core.plugins.host import PluginHost
from zl_core.store import record
from zl_core.store.layout import CampaignLayout
from zl_core.store.screen_table import COLUMNS

from . import canary
from .executor import CampaignSink, Executor, SerialExecutor, TaskRuntime
from .executors import concurrency
from .progress import Progress
from .screen_task import ScreenTask, run_screen_task
from .spec import CampaignSpec
from .start_check import settle_start
from .state import (
    finishing,
    incomplete,
    prepare_resume,
    tracked,
)
from .summary import write_summary

log = logging.getLogger(__name__)


def plan_screen(layout: CampaignLayout, spec: CampaignSpec) -> list[ScreenTask]:
    """One task per operator not skipped: A records into ``<op>/A``, B replays it into ``<op>/B``."""
    return [ScreenTask(op=op, suite=spec.provider.name, backend=spec.backend, sides=spec.sides,
                       settings=spec.settings, layout=layout)
            for op in spec.ops if op.op not in spec.skipped]


def run_screen(host: PluginHost, spec: CampaignSpec, *, executor: Executor | None = None,
               progress: Progress | None = None) -> tuple[Path, list[dict]]:
    """Screen ``spec.ops``: returns the campaign folder and the rows of screen.json, in plan order.

    ``spec.resume`` continues that campaign: finished cells are kept, half-written ones
    set aside and rerun. ``spec.skipped`` are not run and listed as SKIPPED. Without an
    executor the operators run one after the other on ``spec.device``.
    """
    if spec.plan is not None:
        raise ValueError("run_screen takes a screen's spec (no rounds plan); see run_ab")
    executor = executor or SerialExecutor(spec.device)
    spec = attrs.evolve(spec, settings=attrs.evolve(spec.settings, concurrency=concurrency(executor)))
    spec = attrs.evolve(spec, settings=settle_start(host, spec, log.info))
    sides, skipped = spec.sides, spec.skipped
    layout = spec.resume or CampaignLayout.create(spec.runs_root, record.SCREEN, sides.switch)
    if spec.resume is None:
        record.write_campaign(layout, kind=record.SCREEN, **sides.to_json(), backend=spec.backend.name,
                              device=spec.device, suite=spec.provider.name, **spec.settings.to_json(),
                              ops=[str(o) for o in spec.ops], **spec.recorded)
    tasks = plan_screen(layout, spec)
    progress = progress or Progress(2 * len(tasks), f"screen {sides.switch} on {layout.name}")
    progress.legend()
    kept_on = prepare_resume(layout, [t.op.op for t in tasks], progress.line) if spec.resume else {}
    runtime = TaskRuntime(host=host, sink=CampaignSink(layout=layout, progress=progress))
    order = {op.op: i for i, op in enumerate(spec.ops)}
    rows: list[dict] = [skipped_row(op, skipped[op.op]) for op in spec.ops if op.op in skipped]
    write_screen_tables(layout, rows)
    lanes = concurrency(executor)
    first, rest = canary.plan(tasks, choice=spec.canary, lanes=lanes, resumed=spec.resume is not None,
                              say=progress.line)
    try:
        with tracked(layout, "zl screen"):
            for batch in (first, rest):
                if not batch:
                    continue
                for result in executor.run(run_screen_task, batch, runtime, kept_on=kept_on):
                    rows.append(result.row)
                    rows.sort(key=lambda row: order[row["op"]])
                    write_screen_tables(layout, rows)
                if batch is first and first:
                    canary.check(layout, [t.op.op for t in first], rest=len(rest), command="zl screen")
    finally:
        progress.close()
    with finishing(layout.root, "zl screen"):  # the finish's first step (app.seal ends it)
        write_summary(layout.root, host)
    return layout.root, rows


def skipped_row(op: OpSpec, reason: str) -> dict:
    """A screen row for an operator that is not run, with the reason in its notes."""
    row: dict[str, object] = {column: "" for column in COLUMNS}
    row.update(op=op.op, op_file=op.op_file, dtypes=",".join(op.dtypes), verdict=SKIPPED,
               notes=reason, timed_out=0)
    return row


def write_screen_tables(layout: CampaignLayout, rows: list[dict]) -> None:
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        lines.append("\t".join(str(row.get(c, "")).replace("\t", " ") for c in COLUMNS))
    write_text_atomic(layout.screen_tsv, "\n".join(lines) + "\n")
    write_json_atomic(layout.screen_json, {"schema": 1, "ops": rows})


def latest_screen(runs_root: Path) -> Path | None:
    """The most recent complete screen campaign (by its creation stamp) under the runs root.

    An interrupted or still running screen is never taken silently: ``zl ab`` names
    the ones it passed over (:func:`zl_core.campaigns.state.incomplete`).
    """
    layouts = [CampaignLayout(p) for p in Path(runs_root).glob(f"{record.SCREEN}_*")]
    done = [lay for lay in layouts if lay.screen_json.is_file()
            and lay.root not in incomplete(runs_root, record.SCREEN)]
    if not done:
        return None
    return max(done, key=lambda lay: (lay.campaign_file.stat().st_mtime, lay.name)).root
