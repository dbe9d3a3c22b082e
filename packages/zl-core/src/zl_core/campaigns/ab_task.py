"""An A/B task: all rounds of one operator, configs pinned to round 1's record.

Round 1's A cell records the autotune configs; every other cell of every round and
side replays that record. A re-tuned task (``zl ab --retuned``) runs a third side R with
B's environment that records its own picks in round 1 and replays them after, and side
A records its picks once more in round 1 (``A2``, cells of no round's timing). Rounds run their sides counterbalanced (A B, B A, B A,
A B, ...; :mod:`zl_core.stats.order`) so neither a first-process penalty nor a
linear drift favours one side. After round 1, identical TTGIR stops the operator
(``SWITCH_NO_IR_DIFF``) unless it is exempt; a failed or timed-out cell stops it
without a report; an adaptive plan stops once the statistics decide.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import attrs

from zl_core import stats
from zl_core.decisions.ir_verdict import SKIPPED, SWITCH_NO_IR_DIFF, SideResult, switch_no_ir_diff
from zl_core.decisions.pairing import pair_rows
from zl_core.decisions.series import shape_series
from zl_core.foundation.backend import Backend
from zl_core.foundation.switches import Sides
from zl_core.interface.contract import SCREEN_TIMING
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest, CheckSpec
from zl_core.ir.cells import compare_cells
from zl_core.plugins.cell_rows import read_rows
from zl_core.stats.order import a_first, retuned_sides
from zl_core.store.layout import REPICK, RETUNED, CampaignLayout

from . import prefetch
from .cell_run import run_side, whole_on_one_card
from .checks import run_checks, run_control
from .executor import Lane, TaskRuntime
from .judging import judge, series_latencies, stats_plan
from .settings import CellSettings

# Adaptive campaigns are planned up to their first look (more rounds are added as needed).
MIN_ADAPTIVE_ROUNDS = stats.FIRST_ADAPTIVE_LOOK
#: Task end states.
DONE, FAILED = "done", "failed"
#: The pairs of sides a campaign judges: (A, B) the pinned effect, and in a re-tuned one
#: (A, R) the shipped effect and (B, R) the autotuner's part of it.
EFFECT_PAIRS = (("A", "B"), ("A", RETUNED), ("B", RETUNED))


@attrs.frozen(kw_only=True)
class RoundsPlan:
    rounds: int | None  # None = adaptive
    max_rounds: int
    allow_no_ir_diff: bool
    threshold_pct: float
    #: Which side runs first in each round; a resumed campaign keeps the one it recorded.
    round_order: str = stats.COUNTERBALANCED
    #: Operators in the campaign: an adaptive stop waits until its calls survive the
    #: campaign's false-discovery step over this many (stats.adaptive_stop).
    campaign_ops: int = 1

    @property
    def planned(self) -> int:
        """Rounds every operator is planned for (an adaptive plan may add more)."""
        return self.rounds or MIN_ADAPTIVE_ROUNDS


@attrs.frozen(kw_only=True)
class AbTask:
    """One operator of an A/B (or A/A) campaign: everything its rounds need but the lane
    they run on."""

    op: OpSpec
    control: bool
    exempt_no_ir_diff: bool  # A/A, a control, or --allow-no-ir-diff: time it anyway
    layout: CampaignLayout
    suite: str  # the provider's name, resolved where the task runs
    backend: Backend
    sides: Sides
    settings: CellSettings
    plan: RoundsPlan
    check: CheckSpec | None = None  # its accuracy tests, run by each side after its rounds
    control_env: tuple[tuple[str, str], ...] = ()  # the control side's variables (none: no control)
    retuned: bool = False  # side R and A's second record too (zl ab --retuned)

    @property
    def sides_run(self) -> int:
        """Cells of each round: A and B, and R in a re-tuned task."""
        return 3 if self.retuned else 2

    def request(self, lane: Lane, side: str, round_no: int) -> CellRequest:
        """Side ``side``'s cell of round ``round_no`` on ``lane``: round 1's A records,
        every other cell of A and B replays it; R records in its round 1 and replays that
        after; A's second record (:data:`REPICK`) records and times the operator alone."""
        layout = lane.layout(self.layout)
        out_dir = layout.cell_dir(self.op.op, side, round_no)
        record = {RETUNED: layout.cell_dir(self.op.op, RETUNED, 1), REPICK: out_dir}.get(
            side, layout.cell_dir(self.op.op, "A", 1))
        request = self.settings.pinned_request(op=self.op, backend=self.backend, sides=self.sides,
                                               side="A" if side == REPICK else side, device=lane.device,
                                               out_dir=out_dir, record_cell=record,
                                               also_set=tuple(name for name, _ in self.control_env),
                                               round_no=round_no)
        # Later rounds load what round 1 of the same side compiled (its environment only).
        request = attrs.evolve(request, compile_cache=layout.compile_cache(
            self.op.op, "A" if side == REPICK else side))
        if side == REPICK:
            return attrs.evolve(request, side=side, timing=SCREEN_TIMING)
        return request


@attrs.frozen(kw_only=True)
class OpRun:
    """How one operator's rounds ended: done, SWITCH_NO_IR_DIFF, SKIPPED (the benchmark
    skipped at run time) or failed."""

    op: OpSpec
    control: bool
    rounds_done: int
    state: str
    reason: str = ""
    control_side_ran: bool = False  # the control side's cell (task.control_env) ran
    repick_ran: bool = False  # side A's second record (a re-tuned task's) ran


def side_order(scheme: str, round_no: int, *, retuned: bool = False) -> tuple[str, ...]:
    """The sides of round ``round_no`` in the order they run (a re-tuned campaign's three:
    :data:`zl_core.stats.order.RETUNED_CYCLE`, A against B still in ``scheme``'s order)."""
    if retuned:
        return tuple(retuned_sides(round_no))
    return ("A", "B") if a_first(scheme, round_no) else ("B", "A")


def run_ab_task(task: AbTask, lane: Lane, runtime: TaskRuntime) -> OpRun:
    """Run the operator's rounds until its plan, a failure, or a decision stops them;
    every round on the lane's card; then, when it has them, each side's accuracy tests."""
    return whole_on_one_card(_run_task, task, lane, runtime)


def planned_cells(task: AbTask) -> int:
    """The cells the plan counts for ``task``: every side of its planned rounds, A's second
    record, its control side's cell and each side's accuracy tests."""
    return (task.sides_run * task.plan.planned + task.retuned + bool(task.control_env)
            + 2 * (task.check is not None))


def _run_task(task: AbTask, lane: Lane, runtime: TaskRuntime) -> OpRun:
    try:
        run = _run_rounds(task, lane, runtime)
        # Identical TTGIR is checked too: it can still lower to other code on side B.
        checked = task.check is not None and run.state in (DONE, SWITCH_NO_IR_DIFF)
        if checked:
            run_checks(task, lane, runtime)
    finally:
        # The sides' compile caches serve this operator's cells only (a resumed operator
        # compiles again, or loads what a killed session compiled for the same side).
        caches = lane.layout(task.layout).compile_caches(task.op.op)
        shutil.rmtree(caches, ignore_errors=True)
        with contextlib.suppress(OSError):
            caches.parent.rmdir()  # the last operator's leaves no empty folder behind
    # An operator that stopped early (failed, identical TTGIR, decided) leaves cells of
    # the plan unrun: the campaign's count and its time left say so.
    unrun = (task.sides_run * max(0, task.plan.planned - run.rounds_done)
             + (task.retuned and not run.repick_ran)
             + (bool(task.control_env) and not run.control_side_ran)
             + 2 * (task.check is not None and not checked))
    if unrun:
        runtime.sink.more_cells(-unrun, why=f"{task.op.op}: {unrun} planned cell(s) not run "
                                            f"({run.reason or run.state})")
    return run


def _run_rounds(task: AbTask, lane: Lane, runtime: TaskRuntime) -> OpRun:
    early: list[prefetch.Early] = []  # the operator's next cell, started before its turn
    try:
        return _rounds(task, lane, runtime, early)
    finally:
        for cell in early:  # the operator stopped: the cell it started early never times
            cell.stop()
        shutil.rmtree(lane.layout(task.layout).op_dir(task.op.op) / prefetch.TURNS_DIR, ignore_errors=True)


def _next_cell(task: AbTask, round_no: int, side: str) -> tuple[int, str] | None:
    """The cell after (round_no, side) that may start early (:mod:`.prefetch`), or None."""
    rounds = task.plan.rounds
    if rounds is None or not prefetch.applies(pipeline=task.settings.pipeline, fixed_rounds=True,
                                              retuned=task.retuned):
        return None
    order = side_order(task.plan.round_order, round_no)
    nxt = ((round_no, order[order.index(side) + 1]) if side != order[-1]
           else (round_no + 1, side_order(task.plan.round_order, round_no + 1)[0]))
    return nxt if 2 <= nxt[0] <= rounds else None


def _run_cell(task: AbTask, lane: Lane, runtime: TaskRuntime, side: str, round_no: int,
              early: list[prefetch.Early]) -> SideResult:
    """The cell of (round_no, side): the one started early for it, given its turn, or a new
    one; while it holds the gate, the operator's next cell starts (into ``early``)."""
    nxt = _next_cell(task, round_no, side)

    def launch() -> prefetch.Early | None:
        assert nxt is not None
        return prefetch.start_early(runtime, task.suite, task.request(lane, nxt[1], nxt[0]),
                                    round_no=nxt[0], switch_value=task.sides.value(nxt[1]))

    request = task.request(lane, side, round_no)
    mine = next((e for e in early if e.key == (round_no, side)), None)
    if mine is not None:
        early.remove(mine)
    with prefetch.next_when_taken(Path(request.out_dir), launch if nxt else None) as started:
        result = (mine.go() if mine is not None else
                  run_side(runtime, task.suite, request, round_no=round_no,
                           switch_value=task.sides.value(side)))
    early.extend(started)
    return result


def _rounds(task: AbTask, lane: Lane, runtime: TaskRuntime, early: list[prefetch.Early]) -> OpRun:
    op, plan, layout = task.op, task.plan, lane.layout(task.layout)
    limit = plan.rounds or plan.max_rounds
    run = OpRun(op=op, control=task.control, rounds_done=0, state=DONE)
    first_ir: dict[str, str | None] = {}  # each side's round-1 TTGIR fingerprint
    for round_no in range(1, limit + 1):
        if round_no > plan.planned:
            runtime.sink.more_cells(task.sides_run)  # adaptive rounds beyond the planned minimum
        results: dict[str, SideResult] = {}
        for side in side_order(plan.round_order, round_no, retuned=task.retuned):
            results[side] = _run_cell(task, lane, runtime, side, round_no, early)
            skipped = results[side].outcome
            if skipped is not None and skipped.skipped:  # declined here: no round to pair
                reason = (f"round {round_no} side {side} skipped at run time: "
                          + "; ".join(dict.fromkeys(skipped.skips)))
                runtime.sink.line(f"{op.op}: {SKIPPED}, {reason}; no report for this operator")
                return attrs.evolve(run, rounds_done=round_no, state=SKIPPED, reason=reason)
        run = attrs.evolve(run, rounds_done=round_no)
        first_ir = _same_ir_as_round_one(task.layout, op.op, round_no, results, first_ir, runtime)
        bad = [s for s, r in results.items() if r.outcome is None or not r.outcome.ok]
        if bad:
            reason = f"round {round_no} side {','.join(bad)} failed or timed out"
            runtime.sink.line(f"{op.op}: stopped, {reason}; no report for this operator")
            return attrs.evolve(run, state=FAILED, reason=reason)
        if round_no == 1 and task.control_env:
            control = run_control(task, lane, runtime)
            run = attrs.evolve(run, control_side_ran=True)
            if control.outcome is None or not control.outcome.ok:
                reason = "round 1's control side failed or timed out"
                runtime.sink.line(f"{op.op}: stopped, {reason}; no report for this operator")
                return attrs.evolve(run, state=FAILED, reason=reason)
        if round_no == 1:
            fa, fb = results["A"].ir.fingerprint, results["B"].ir.fingerprint
            if switch_no_ir_diff(fa, fb, exempt=task.exempt_no_ir_diff):
                runtime.sink.line(f"{SWITCH_NO_IR_DIFF} op={op.op}: skipped "
                                  "(pass --allow-no-ir-diff to time it anyway)")
                return attrs.evolve(run, state=SWITCH_NO_IR_DIFF, reason="identical TTGIR after round 1")
            if fa is None and fb is None and not task.exempt_no_ir_diff:
                runtime.sink.line(f"{op.op}: note: no .ttgir on either side, so the identical-IR "
                                  "check was skipped (not 'identical')")
            if task.retuned:  # A records again: how often its own picks reproduce
                repick = run_side(runtime, task.suite, task.request(lane, REPICK, 1), round_no=1,
                                  switch_value=task.sides.value("A"))
                run = attrs.evolve(run, repick_ran=True)
                if repick.outcome is None or not repick.outcome.ok:
                    runtime.sink.line(f"{op.op}: note: side A's second record failed; the report "
                                      "reads changed picks without their reference")
        if plan.rounds is None and round_no >= stats.MIN_LOOK_ROUNDS:
            stop, why = adaptive_stop(layout, op.op, round_no, plan, retuned=task.retuned)
            if stop:
                runtime.sink.line(f"{op.op}: adaptive stop after {round_no} rounds: {why}")
                return attrs.evolve(run, reason=why)
    return run


def _same_ir_as_round_one(layout: CampaignLayout, op: str, round_no: int, results: dict[str, SideResult],
                          first_ir: dict[str, str | None], runtime: TaskRuntime) -> dict[str, str | None]:
    """A side whose later round compiled other TTGIR than its round 1 (its compile cache
    shared, its configs pinned) timed other code: the campaign's output says so, and
    whether only names and source locations differ. Returns each side's round-1
    fingerprint (taken from round 1's results)."""
    if round_no == 1:
        return {side: result.ir.fingerprint for side, result in results.items()}
    for side, result in results.items():
        if result.outcome is None or not result.outcome.ok or result.ir.fingerprint is None:
            continue
        first = first_ir.get(side)
        if first is not None and result.ir.fingerprint != first:
            runtime.sink.line(f"{op}: note: round {round_no} side {side}'s TTGIR differs from "
                              f"round 1's: {_drift(layout, op, side, round_no)}")
    return first_ir


def _drift(layout: CampaignLayout, op: str, side: str, round_no: int) -> str:
    """How a side's round ``round_no`` TTGIR differs from its round 1's, in a few words."""
    try:
        comparison = compare_cells(layout.cell_dir(op, side, 1), layout.cell_dir(op, side, round_no))
    except (OSError, ValueError) as exc:  # a dump unreadable now: say what is known
        return f"its rounds may not all have timed the same code (the dumps could not be compared: {exc})"
    if comparison.canonical_equal:
        return ("only names and source locations changed (canonical TTGIR identical), "
                "the same code timed")
    return f"{comparison.headline()}; its rounds did not all time the same code"


def adaptive_stop(layout: CampaignLayout, op: str, rounds: int, plan: RoundsPlan, *,
                  retuned: bool = False) -> tuple[bool, str]:
    """Whether the rounds so far stop the operator: at a planned look once every shape is
    decided, or when the budget is spent; a re-tuned operator once each of its three
    effects would stop. The report judges by the same function."""
    judged_by = stats_plan(rounds=None, max_rounds=plan.max_rounds, threshold_pct=plan.threshold_pct,
                           rounds_done=rounds, round_order=plan.round_order)
    answers = []
    for first, second in (EFFECT_PAIRS if retuned else EFFECT_PAIRS[:1]):
        pairs = {r: pair_rows(read_rows(layout.cell_dir(op, first, r)), read_rows(layout.cell_dir(op, second, r)))
                 for r in range(1, rounds + 1)}
        verdict = judge({op: series_latencies(shape_series(pairs))}, judged_by, {op: rounds},
                        pair=(first, second) if retuned else None)
        answers.append(stats.adaptive_stop(verdict.operators[0], judged_by, campaign_operators=plan.campaign_ops))
    going = [(pair, why) for pair, (stop, why) in zip(EFFECT_PAIRS, answers, strict=False) if not stop]
    if not going:
        return True, answers[0][1]
    (first, second), why = going[0]
    return False, why if not retuned else f"{second} against {first}: {why}"

