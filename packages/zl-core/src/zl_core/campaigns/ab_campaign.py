"""An A/B (or A/A) campaign: plan one task per operator, run the plan with telemetry
sampled alongside, then flag throttled or drifting cells in status.tsv."""

from __future__ import annotations

from pathlib import Path

import attrs

from zl_core.backend import Backend
from zl_core.host import PluginHost
from zl_core.ir_verdict import SWITCH_NO_IR_DIFF
from zl_core.opspec import OpSpec
from zl_core.provider import Provider
from zl_core.status import rewrite_flags, telemetry_flags
from zl_core.store import record
from zl_core.store.layout import CampaignLayout
from zl_core.switches import Sides

from .ab_task import AbTask, OpRun, RoundsPlan, run_ab_task
from .executor import CampaignSink, Executor, SerialExecutor, TaskRuntime
from .executors import concurrency
from .judging import recorded_round_order
from .progress import Progress
from .settings import CellSettings
from .start_check import settle_start
from .state import prepare_resume, tracked
from .telemetry_sampler import TelemetrySampler


def plan_ab(layout: CampaignLayout, suite: str, backend: Backend, sides: Sides, ops: list[OpSpec],
            controls: list[OpSpec], settings: CellSettings, plan: RoundsPlan, *,
            aa: bool) -> list[AbTask]:
    """One task per operator, the operators first and the A/A controls after them."""
    def task(op: OpSpec, control: bool) -> AbTask:
        return AbTask(op=op, control=control, exempt_no_ir_diff=aa or control or plan.allow_no_ir_diff,
                      layout=layout, suite=suite, backend=backend, sides=sides,
                      settings=settings, plan=plan)

    return [task(o, False) for o in ops] + [task(c, True) for c in controls]


def run_ab(host: PluginHost, provider: Provider, backend: Backend, device: str | None,
           sides: Sides, ops: list[OpSpec], controls: list[OpSpec], settings: CellSettings,
           plan: RoundsPlan, runs_root: Path, *, telemetry_interval: float, aa: bool,
           screen: Path | None, executor: Executor | None = None,
           resume: CampaignLayout | None = None,
           recorded: dict | None = None) -> tuple[Path, list[OpRun]]:
    """Run the rounds of ``ops`` (and ``controls``): the campaign folder and each operator's end.

    ``resume`` continues that campaign (finished cells kept, half-written ones set
    aside and rerun); ``recorded`` adds fields to campaign.json (the arguments).
    """
    kind = record.AA if aa else record.AB
    executor = executor or SerialExecutor(device)
    lanes = concurrency(executor)
    settings = attrs.evolve(settings, concurrency=lanes)
    settings = settle_start(host, provider, backend, device, sides, next(iter([*ops, *controls]), None),
                            settings, print)
    layout = resume or CampaignLayout.create(runs_root, kind, sides.switch)
    if resume is not None:  # rounds still to run keep the order the first ones ran in
        plan = attrs.evolve(plan, round_order=recorded_round_order(record.read_campaign(layout.root)))
    else:
        record.write_campaign(layout, kind=kind, **sides.to_json(), backend=backend.name,
                              device=device, suite=provider.name, **settings.to_json(),
                              ops=[str(o) for o in [*ops, *controls]],
                              rounds=plan.rounds if plan.rounds else "auto", max_rounds=plan.max_rounds,
                              controls=[c.op for c in controls], screen=str(screen) if screen else None,
                              threshold_pct=plan.threshold_pct, allow_no_ir_diff=plan.allow_no_ir_diff,
                              round_order=plan.round_order,
                              **(recorded or {}))
    tasks = plan_ab(layout, provider.name, backend, sides, ops, controls, settings, plan, aa=aa)
    progress = Progress(2 * plan.planned * len(tasks), f"{kind} {sides.switch} on {layout.name}")
    progress.legend()
    kept_on = prepare_resume(layout, [t.op.op for t in tasks], progress.line) if resume else {}
    runtime = TaskRuntime(host=host, sink=CampaignSink(layout=layout, progress=progress))
    # Several lanes: sample every device of the host (rows carry the device index).
    sampled = device if lanes == 1 else None
    sampler = TelemetrySampler(host, backend, sampled, layout.telemetry_file, telemetry_interval)
    sampler.start()
    start_note = sampler.note
    if start_note:
        progress.line(start_note)
    try:
        with tracked(layout, "zl ab"):
            runs = list(executor.run(run_ab_task, tasks, runtime, kept_on=kept_on))
    finally:
        sampler.stop()
        progress.close()
    if sampler.note and sampler.note != start_note and sampler.samples == 0:
        print(sampler.note)  # the sampler ran but never produced a row: say why
    flags = telemetry_flags(layout.root, device)
    for run in runs:
        if run.state == SWITCH_NO_IR_DIFF:
            for side in ("A", "B"):
                flags.setdefault((run.op.op, "1", side), []).append(SWITCH_NO_IR_DIFF)
    marked = rewrite_flags(layout.root, flags)
    if marked:
        print(f"status.tsv: {marked} cell(s) flagged (throttle/drift or {SWITCH_NO_IR_DIFF})")
    return layout.root, runs
