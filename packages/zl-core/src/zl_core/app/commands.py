"""``zl screen`` and ``zl ab`` as functions: options in, a campaign and its outcome out.

The command line, the nox sessions (through the command line, in the user's
interpreter) and the tests all run campaigns through these. What a user should read
as the campaign starts is logged (info; notes worth acting on as warnings); the
outcome records carry the results.
"""

from __future__ import annotations

import logging
from pathlib import Path

import attrs

from zl_core.campaigns import canary, kept_cells, state
from zl_core.campaigns.ab_campaign import run_ab
from zl_core.campaigns.ab_task import OpRun, RoundsPlan
from zl_core.campaigns.estimate import Estimate, estimate, history
from zl_core.campaigns.executor import Executor
from zl_core.campaigns.judging import MIN_LOOK_ROUNDS
from zl_core.campaigns.screen_campaign import latest_screen, run_screen
from zl_core.campaigns.settings import switch_vars
from zl_core.campaigns.spec import CampaignSpec
from zl_core.cells.cell_setup import inherited_by_cells
from zl_core.decisions.ir_verdict import IR_CHANGED, NO_IR_DIFF
from zl_core.foundation.compiler_env import caliber_value
from zl_core.foundation.errors import UnknownProviderError, UsageError, ZlError
from zl_core.foundation.switches import Sides, resolve_sides
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CheckSpec
from zl_core.interface.sources import Sources
from zl_core.interface.switch_check import check_campaign_switch
from zl_core.plugins.host import PluginHost
from zl_core.store.layout import CampaignLayout
from zl_core.store.record import CampaignRecord, read_campaign
from zl_core.store.screen_table import read_screen

from . import lanes
from .device_users import other_processes
from .inputs import check_rounds, results_written_under, runs_root
from .lanes import resolve_devices
from .options import AbOptions, ScreenOptions, Where
from .replay_root import check_replay_root
from .reports import finished_ab_report
from .resolve import cell_settings, resolve
from .seal import check_frozen, finish_campaign
from .skipped import read_dismiss, skipped_ops

log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class ScreenOutcome:
    campaign: Path
    rows: tuple[dict, ...]  # screen.json's rows, in plan order
    compile_only: bool
    failed: tuple[str, ...] = ()  # operators with a failed cell (error, timeout, preflight)


@attrs.frozen(kw_only=True)
class AbOutcome:
    campaign: Path | None  # None: nothing to time (the screen found no IR change)
    runs: tuple[OpRun, ...]
    screen: Path | None  # the screen the operators came from, if any
    threshold_pct: float
    failed: tuple[str, ...] = ()  # operators with a failed cell (error, timeout, preflight)
    report: dict | None = None  # the report model kept as the campaign's report.json


def screen(host: PluginHost, options: ScreenOptions, *,
           executor: Executor | None = None) -> ScreenOutcome:
    asked_ir_only = options.measure.compile_only
    options, resume = lanes.checked(options, "screen")
    if options.frozen is not None:  # a sealed campaign: nothing runs unless it is as frozen
        check_frozen(host, options.frozen, python=options.measure.python)
    root = runs_root(options.runs_root)
    place = lanes.placed(host, options, options.where, "screen", root, options.ops, resume=resume)
    got = place.got
    if resume is not None:
        check_resume_mode(host, resume, got, asked_ir_only=asked_ir_only)
    if got.note:  # a default taken that changes what the screen measures (the IR-only screen)
        log.warning("zl screen: %s", got.note)
    choice = options.switch
    sides = resolve_sides(got.backend, choice.switch, choice.a_value, choice.b_value,
                          choice.a_env, choice.b_env)
    ops = list(got.ops)
    dismissed = read_dismiss(options.dismiss) if options.dismiss else {}
    skipped = skipped_ops(got.provider, got.sources, ops, dismissed)
    replayed = check_replay_root(got.measure, options.lanes, got.backend,
                                 [op for op in ops if op.op not in skipped])
    check_campaign_switch(got.provider, sides, backend=got.backend, python=got.measure.python,
                          target=got.measure.target, switch_given=choice.switch,
                          force=choice.force)
    if skipped:
        log.info(f"zl screen: {len(skipped)} operator(s) SKIPPED, not run: "
                 + "; ".join(f"{op} ({why})" for op, why in list(skipped.items())[:5])
                 + (f"; and {len(skipped) - 5} more (screen.tsv lists each)" if len(skipped) > 5 else ""))
    log.info(f"zl screen: switch {sides.switch} (A={sides.a_value} B={sides.b_value}) on "
             f"{got.backend.name}{lanes.where_text(got.device, options.lanes, place.devices)}, suite "
             f"{got.provider.name}, {len(ops)} operator(s)"
             + (f", IR-only for {got.measure.target}" if got.measure.compile_only else "")
             + (f"; resuming {resume.root}" if resume else ""))
    _say_replayed("zl screen", replayed)
    _say_inherited("zl screen", got.provider, got.backend, sides)
    recorded = _with_device_users(host, got, place, options.lanes, "zl screen", resumed=resume is not None)
    spec = CampaignSpec(provider=got.provider, backend=got.backend, device=got.device, sides=sides,
                        ops=ops, settings=cell_settings(got.measure, got.sources), runs_root=root,
                        resume=resume, recorded=recorded, skipped=skipped,
                        canary=canary.choice_for(options.lanes.canary, frozen=options.frozen is not None))
    with results_written_under(root, "zl screen"):
        campaign, rows = run_screen(host, spec, executor=executor or place.executor)
        with state.finishing(campaign, "zl screen"):
            finish_campaign(campaign)  # receipts, then complete; a frozen campaign is sealed
    return ScreenOutcome(campaign=campaign, rows=tuple(rows), compile_only=got.measure.compile_only,
                         failed=tuple(kept_cells.failed_ops(CampaignLayout(campaign))))


@attrs.frozen(kw_only=True)
class ScreenPlan:
    ops: tuple[str, ...]  # what the screen would run, in order
    skipped: dict[str, str]  # op -> why it would not run
    compile_only: bool
    backend: str
    estimate: Estimate
    note: str | None = None  # how the suite or device was resolved (the IR-only fallback)


def screen_plan(host: PluginHost, options: ScreenOptions) -> ScreenPlan:
    """What ``screen`` would run and what it would cost, from this host's earlier screens.
    Nothing is run or written."""
    options, _resume = lanes.checked(options, "screen")
    root = runs_root(options.runs_root)
    got = resolve(host, options.where, options.measure, what="zl screen --plan",
                  local_device=lanes.needs_local_device(options.lanes), ir_only_without_device=True,
                  op_specs=options.ops)
    ops = list(got.ops)
    dismissed = read_dismiss(options.dismiss) if options.dismiss else {}
    skipped = skipped_ops(got.provider, got.sources, ops, dismissed)
    run = [op.op for op in ops if op.op not in skipped]
    devices = (resolve_devices(host, got.backend, options.lanes.devices, what="zl screen --plan")
               if options.lanes.devices else None)
    seen, read = history(root, "screen", compile_only=got.measure.compile_only)
    cost = estimate(run, seen, sides=2, lanes=len(devices) if devices else 1, campaigns_read=read)
    return ScreenPlan(ops=tuple(run), skipped=dict(skipped), compile_only=got.measure.compile_only,
                      backend=got.backend.name, estimate=cost, note=got.note)


def check_resume_mode(host: PluginHost, resume: CampaignLayout, got, *, asked_ir_only: bool) -> None:
    """Refuse to resume an IR-only screen where a device is now visible unless
    --compile-only is given again: its finished cells were judged without latencies
    (NO_IR_DIFF), and timed cells would be judged otherwise (NO_ROWS for the same code)."""
    meta = read_campaign(resume.root)
    if not meta.compile_only or asked_ir_only:
        return
    try:
        visible = host.enumerate_devices(got.backend)
    except ZlError:
        visible = []
    if visible:
        raise UsageError(f"campaign {resume.root} is an IR-only screen (TTGIR for "
                         f"{meta.target}, no latencies), and this machine has a "
                         f"{got.backend.name} device ({visible[0]}): timed cells would not be judged "
                         "like its finished ones. Continue it IR-only with: zl screen --resume "
                         f"{resume.root} --compile-only; or time its operators in a new screen")


@attrs.frozen(kw_only=True)
class ScreenInput:
    """What an A/B campaign takes from a screen: its operators, controls and settings."""

    path: Path
    meta: CampaignRecord
    changed: tuple[OpSpec, ...]
    quiet: tuple[OpSpec, ...]  # NO_IR_DIFF: candidate controls (--controls)


def read_screen_input(screen: Path | None, root: Path) -> ScreenInput:
    path = screen or latest_screen(root)
    for other in ([] if screen else state.incomplete(root, "screen"))[:3]:
        other_meta = read_campaign(other)
        log.warning(f"zl ab: note: not taking screen {other}: it is {state.state_of(other_meta)}; "
                    f"{state.finish_hint(other, other_meta, 'zl screen')}")
    if path is None:
        raise UsageError(f"no complete screen found under {root}; run 'zl screen --ops ...' first "
                         "(or resume one) or name operators with --ops")
    meta = read_campaign(path)
    if state.state_of(meta) != state.COMPLETE:
        log.warning(f"zl ab: note: screen {path} is {state.state_of(meta)}; only its finished "
                    f"operators are taken ({state.finish_hint(path, meta, 'zl screen')})")
    if meta.compile_only:
        raise UsageError(f"screen {path} was IR-only (--compile-only); A/B rounds need a device screen")
    rows = read_screen(path)

    sources = Sources.from_json(meta.sources) or Sources()

    def specs(verdict: str) -> tuple[OpSpec, ...]:
        return tuple(OpSpec.parse(r.op + ":" + (r.op_file or "") + (":" + r.dtypes if r.dtypes else ""),
                                  prefixes=sources.prefixes, default_source=sources.default_name)
                     for r in rows if r.verdict == verdict)

    return ScreenInput(path=Path(path), meta=meta, changed=specs(IR_CHANGED), quiet=specs(NO_IR_DIFF))


def where_from_screen(host: PluginHost, where: Where, meta: CampaignRecord) -> Where:
    """The screen's suite, checkouts, backend and device wherever the user named none anew
    (its checkouts only where its suite runs from them: :attr:`Provider.source_env`). A
    suite the screen ran that is no longer installed is refused by name (timing its
    operators with another suite's benchmarks would fail every cell)."""
    if where.source is None and where.suite is None and meta.suite:
        providers = host.providers()
        suite = providers.get(meta.suite)
        if suite is None:
            raise UnknownProviderError(
                f"the screen's operators come from suite {meta.suite!r}, which is not installed "
                f"here (installed: {', '.join(sorted(providers)) or 'none'}); install the package "
                "that adds it, or name --ops and --suite")
        where = attrs.evolve(where, suite=meta.suite)
        if suite.source_env:
            recorded = (Sources.from_json(meta.sources) or Sources()).items()
            where = attrs.evolve(where, source=recorded[0] if recorded else meta.source,
                                 more_sources=recorded[1:])
    if where.backend is None:
        where = attrs.evolve(where, backend=meta.backend)
    if where.device is None and meta.device is not None:
        where = attrs.evolve(where, device=str(meta.device))
    return where


def ab(host: PluginHost, options: AbOptions, *,
       executor: Executor | None = None) -> AbOutcome:
    """The A/B campaign ``options`` ask for; its ``campaign`` is None when the screen it
    takes found no IR_CHANGED operator (nothing to time, nothing written)."""
    options, resume = lanes.checked(options, "ab")
    if options.frozen is not None:  # a sealed campaign: nothing runs unless it is as frozen
        check_frozen(host, options.frozen, python=options.measure.python)
    check_rounds(options.rounds, options.max_rounds)
    if options.measure.compile_only or options.measure.target:
        raise UsageError("A/B rounds time cells on a device, and compile-only cells time nothing; "
                         "compare generated code with zl screen --compile-only")
    if options.controls < 0:
        raise UsageError("--controls must be 0 or more")
    check_retuned(options)
    root = runs_root(options.runs_root)
    source = None
    controls: list[OpSpec] = []
    if not options.ops or options.controls:
        source = read_screen_input(options.screen, root)
        if options.controls:
            if len(source.quiet) < options.controls:
                raise UsageError(f"--controls {options.controls}: screen {source.path} has only "
                                 f"{len(source.quiet)} NO_IR_DIFF operator(s)")
            controls = list(source.quiet[: options.controls])
    if source is not None and options.screen is None:
        options = attrs.evolve(options, screen=source.path)  # a resume takes this screen again
    from_screen = source if source is not None and not options.ops else None
    where = where_from_screen(host, options.where, from_screen.meta) if from_screen else options.where
    place = lanes.placed(host, options, where, "ab", root, options.ops if from_screen is None else None)
    got = place.got
    screen_path = source.path if source else None
    if from_screen is None:
        ops = list(got.ops)
    else:
        ops = list(from_screen.changed)
        if not ops and not options.aa:
            return AbOutcome(campaign=None, runs=(), screen=screen_path,
                             threshold_pct=options.threshold_pct)
        log.info(f"zl ab: using screen {from_screen.path}: {', '.join(o.op for o in ops) or '(none)'}")
    sides = _sides(got.backend, options, source.meta if source else None)
    replayed = check_replay_root(got.measure, options.lanes, got.backend, [*ops, *controls])
    _say_replayed("zl ab", replayed)
    if not options.aa:
        check_campaign_switch(got.provider, sides, backend=got.backend, python=got.measure.python,
                              target=got.measure.target,
                              switch_given=options.switch.switch or sides.switch,
                              force=options.switch.force)
    _say_inherited("zl ab", got.provider, got.backend, sides,
                   tuple(name for name, _ in options.control_env))
    recorded = _with_device_users(host, got, place, options.lanes, "zl ab", resumed=resume is not None)
    plan = RoundsPlan(rounds=options.rounds, max_rounds=max(options.max_rounds, MIN_LOOK_ROUNDS),
                      allow_no_ir_diff=options.allow_no_ir_diff, threshold_pct=options.threshold_pct,
                      campaign_ops=len(ops) + len(controls))
    spec = CampaignSpec(provider=got.provider, backend=got.backend, device=got.device, sides=sides,
                        ops=ops, controls=controls, settings=cell_settings(got.measure, got.sources),
                        plan=plan, aa=options.aa, screen=screen_path, runs_root=root,
                        telemetry_interval=options.telemetry_interval, resume=resume,
                        recorded=recorded,
                        checks={op: CheckSpec(file=file, select=select) for op, file, select in options.checks},
                        control_env=options.control_env, retuned=options.retuned,
                        canary=canary.choice_for(options.lanes.canary, frozen=options.frozen is not None))
    with results_written_under(root, "zl ab"):
        campaign, runs = run_ab(host, spec, executor=executor or place.executor)
        # report.json, receipts, then complete (a frozen campaign sealed)
        model = finished_ab_report(campaign, options.threshold_pct)
    return AbOutcome(campaign=campaign, runs=tuple(runs), screen=screen_path,
                     threshold_pct=options.threshold_pct,
                     failed=tuple(kept_cells.failed_ops(CampaignLayout(campaign))), report=model)


def check_retuned(options: AbOptions) -> None:
    """Refuse ``--retuned`` where side R cannot record its own picks or has no switch to
    re-tune under."""
    if not options.retuned:
        return
    if options.aa:
        raise UsageError("--retuned adds side B's environment re-tuned; an A/A campaign (--aa) has "
                         "no switch to re-tune under: drop one of them")
    if options.measure.replay_root is not None:
        raise UsageError("--retuned records side R's own autotune picks, and --replay-root pins every "
                         "cell to a screen's record: drop one of them")


def _with_device_users(host: PluginHost, got, place, lanes_asked, command: str, *,
                       resumed: bool) -> dict:
    """campaign.json's recorded fields, with the other processes found on the campaign's
    devices (``device_processes``) when ``--other-processes record`` let it run beside them.
    Compile-only cells use no device; a scheduler's devices are its workers'."""
    if got.measure.compile_only or lanes_asked.scheduler:
        return place.recorded
    devices = place.devices or [got.device]
    found = other_processes(host, got.backend, devices, choice=lanes_asked.other_processes,
                            command=command)
    return {**place.recorded, "device_processes": found} if found and not resumed else place.recorded


def _say_replayed(command: str, screen: Path | None) -> None:
    if screen is not None:
        log.info(f"{command}: every cell replays the autotune configs side A of screen {screen} "
                 "recorded for its operator (--replay-root); no cell records")


def _say_inherited(command: str, provider, backend, sides: Sides, also_set: tuple[str, ...] = ()) -> None:
    """Name the compiler's variables the cells will inherit from this environment: each
    is recorded, and compared as caliber with any campaign the cells are set against."""
    inherited = inherited_by_cells(provider, backend, switch_vars(sides, also_set))
    if inherited:
        log.info(f"{command}: the cells inherit {caliber_value(inherited)} from this environment "
                 "(compiler_env: recorded, and compared as caliber; docs/caliber.md)")


def _sides(backend, options: AbOptions, screen_meta: CampaignRecord | None) -> Sides:
    """The screen's sides unless a switch is named anew; A/A runs side A's on both."""
    choice = options.switch
    if screen_meta is None or choice.given:
        return resolve_sides(backend, choice.switch, choice.a_value, choice.b_value,
                             choice.a_env, choice.b_env, aa=options.aa)
    sides = Sides.from_json(screen_meta.to_json())
    if options.aa:
        sides = Sides(switch=sides.switch, a_value=sides.a_value, b_value=sides.a_value,
                      a_env=sides.a_env, b_env=dict(sides.a_env))
    log.info(f"zl ab: switch {sides.switch} A={sides.a_value} B={sides.b_value} (from the screen)")
    return sides
