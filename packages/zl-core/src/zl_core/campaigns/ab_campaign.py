"""An A/B (or A/A) campaign: plan one task per operator, run the plan with telemetry
sampled alongside, then flag throttled or drifting cells in status.tsv."""

from __future__ import annotations

import logging
from pathlib import Path

import attrs

from zl_core.decisions.ir_verdict import SWITCH_NO_IR_DIFF
from zl_core.decisions.status import rewrite_flags, telemetry_flags
from zl_core.interface.opspec import OpSpec
from zl_core.plugins.host import PluginHost
from zl_core.store import record
from zl_core.store.layout import RETUNED, CampaignLayout

from . import canary
from .ab_task import AbTask, OpRun, planned_cells, run_ab_task
from .executor import CampaignSink, Executor, SerialExecutor, TaskRuntime
from .executors import concurrency, pipeline
from .judging import recorded_round_order
from .progress import Progress
from .spec import CampaignSpec
from .start_check import settle_start
from .state import finishing, prepare_resume, tracked
from .summary import write_summary
from .telemetry_sampler import TelemetrySampler

log = logging.getLogger(__name__)


def plan_ab(layout: CampaignLayout, spec: CampaignSpec) -> list[AbTask]:
    """One task per operator, the operators first and the controls after them (NO_IR_DIFF
    operators timed like the others: a verdict on one is a false positive)."""
    plan = spec.plan
    if plan is None:
        raise ValueError("an A/B campaign needs its rounds plan")

    def task(op: OpSpec, control: bool) -> AbTask:
        return AbTask(op=op, control=control,
                      exempt_no_ir_diff=spec.aa or control or plan.allow_no_ir_diff,
                      layout=layout, suite=spec.provider.name, backend=spec.backend, sides=spec.sides,
                      settings=spec.settings, plan=plan, check=spec.checks.get(op.op),
                      control_env=spec.control_env, retuned=spec.retuned)

    return [task(o, False) for o in spec.ops] + [task(c, True) for c in spec.controls]


def run_ab(host: PluginHost, spec: CampaignSpec, *,
           executor: Executor | None = None) -> tuple[Path, list[OpRun]]:
    """Run the rounds of ``spec.ops`` (and its controls): the campaign folder and each
    operator's end.

    ``spec.resume`` continues that campaign (finished cells kept, half-written ones set
    aside and rerun, the rounds still to run in the order the first ones ran in).
    Without an executor the operators run one after the other on ``spec.device``.
    """
    plan = spec.plan
    if plan is None:
        raise ValueError("run_ab takes an A/B campaign's spec (with its rounds plan); see run_screen")
    kind, sides, device = spec.kind, spec.sides, spec.device
    executor = executor or SerialExecutor(device)
    lanes = concurrency(executor)
    spec = attrs.evolve(spec, settings=attrs.evolve(spec.settings, concurrency=lanes,
                                                    pipeline=pipeline(executor)))
    spec = attrs.evolve(spec, settings=settle_start(host, spec, log.info))
    layout = spec.resume or CampaignLayout.create(spec.runs_root, kind, sides.switch)
    if spec.resume is not None:  # rounds still to run keep the order the first ones ran in
        plan = attrs.evolve(plan, round_order=recorded_round_order(record.read_campaign(layout.root)))
        spec = attrs.evolve(spec, plan=plan)
    else:
        record.write_campaign(layout, kind=kind, **sides.to_json(), backend=spec.backend.name,
                              device=device, suite=spec.provider.name, **spec.settings.to_json(),
                              ops=[str(o) for o in [*spec.ops, *spec.controls]],
                              rounds=plan.rounds if plan.rounds else "auto", max_rounds=plan.max_rounds,
                              controls=[c.op for c in spec.controls],
                              screen=str(spec.screen) if spec.screen else None,
                              threshold_pct=plan.threshold_pct, allow_no_ir_diff=plan.allow_no_ir_diff,
                              round_order=plan.round_order,
                              **({"retuned": True} if spec.retuned else {}),
                              **spec.recorded)
    tasks = plan_ab(layout, spec)
    progress = Progress(sum(planned_cells(t) for t in tasks), f"{kind} {sides.switch} on {layout.name}")
    progress.legend()
    kept_on = prepare_resume(layout, [t.op.op for t in tasks], progress.line) if spec.resume else {}
    runtime = TaskRuntime(host=host, sink=CampaignSink(layout=layout, progress=progress))
    # Several lanes: sample every device of the host (rows carry the device index).
    sampled = device if lanes == 1 else None
    sampler = TelemetrySampler(host, spec.backend, sampled, layout.telemetry_file, spec.telemetry_interval)
    sampler.start()
    start_note = sampler.note
    if start_note:
        progress.line(start_note)
    first, rest = canary.plan(tasks, choice=spec.canary, lanes=lanes, resumed=spec.resume is not None,
                              say=progress.line)
    runs: list[OpRun] = []
    try:
        with tracked(layout, "zl ab"):
            for batch in (first, rest):
                runs += executor.run(run_ab_task, batch, runtime, kept_on=kept_on) if batch else ()
                if batch is first and first:
                    canary.check(layout, [t.op.op for t in first], rest=len(rest), command="zl ab")
    finally:
        sampler.stop()
        progress.close()
    if sampler.note and sampler.note != start_note and sampler.samples == 0:
        log.info(sampler.note)  # the sampler ran but never produced a row: say why
    with finishing(layout.root, "zl ab"):
        flags = telemetry_flags(layout.root, device)
        for run in runs:
            if run.state == SWITCH_NO_IR_DIFF:
                for side in ("A", "B", RETUNED) if spec.retuned else ("A", "B"):
                    flags.setdefault((run.op.op, "1", side), []).append(SWITCH_NO_IR_DIFF)
        marked = rewrite_flags(layout.root, flags)
        if marked:
            log.info(f"status.tsv: {marked} cell(s) flagged (throttle/drift or {SWITCH_NO_IR_DIFF})")
        write_summary(layout.root, host)  # after the flags: its cell_flags column copies them
    return layout.root, runs
