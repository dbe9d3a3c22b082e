"""``zl ab``: N paired rounds per operator in fresh processes, configs pinned.

Round 1's A cell records the autotune configs; every other cell of every round
and side replays that record. Round order alternates (A B, B A, ...) so slow
drift does not always favour the same side. After round 1, identical TTGIR
fingerprints stop the operator (``SWITCH_NO_IR_DIFF``) unless allowed or the
operator is a control; a failed or timed-out cell stops it without a report.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import attrs

from zl_core import stats
from zl_core.backend import Backend
from zl_core.campaign import (
    TELEMETRY_NAME,
    CellSettings,
    Progress,
    TelemetrySampler,
    new_campaign_dir,
    write_campaign,
)
from zl_core.host import PluginHost
from zl_core.opspec import OpSpec
from zl_core.provider import Provider
from zl_core.screen import SideResult, run_side
from zl_core.status import rewrite_flags, telemetry_flags
from zl_core.switches import Sides

SWITCH_NO_IR_DIFF = "SWITCH_NO_IR_DIFF"
# Adaptive campaigns first look at the first round an early look can judge.
MIN_ADAPTIVE_ROUNDS = stats.MIN_EARLY_ROUNDS


@attrs.frozen(kw_only=True)
class RoundsPlan:
    rounds: int | None  # None = adaptive
    max_rounds: int
    allow_no_ir_diff: bool
    threshold_pct: float


@attrs.define
class OpRun:
    op: OpSpec
    control: bool = False
    rounds_done: int = 0
    state: str = "running"  # running | done | SWITCH_NO_IR_DIFF | failed
    reason: str = ""


def side_order(round_no: int) -> tuple[str, str]:
    return ("A", "B") if round_no % 2 == 1 else ("B", "A")


def run_ab(host: PluginHost, provider: Provider, backend: Backend, device: str | None,
           sides: Sides, ops: list[OpSpec], controls: list[OpSpec], settings: CellSettings,
           plan: RoundsPlan, runs_root: Path, *, telemetry_interval: float, aa: bool,
           screen: Path | None) -> tuple[Path, list[OpRun]]:
    campaign = new_campaign_dir(runs_root, "aa" if aa else "ab", sides.switch)
    write_campaign(campaign, kind="ab", sides=sides, backend=backend, provider=provider,
                   settings=settings, ops=[*ops, *controls], device=device,
                   rounds=plan.rounds if plan.rounds else "auto", max_rounds=plan.max_rounds,
                   aa=aa, controls=[c.op for c in controls],
                   screen=str(screen) if screen else None, threshold_pct=plan.threshold_pct,
                   allow_no_ir_diff=plan.allow_no_ir_diff)
    runs = [OpRun(op=o) for o in ops] + [OpRun(op=c, control=True) for c in controls]
    planned = plan.rounds or MIN_ADAPTIVE_ROUNDS
    progress = Progress(2 * planned * len(runs), f"ab {sides.switch} on {campaign.name}")
    sampler = TelemetrySampler(host, backend, device, campaign / TELEMETRY_NAME, telemetry_interval)
    sampler.start()
    start_note = sampler.note
    if start_note:
        progress.line(start_note)
    try:
        for run in runs:
            _run_operator(host, provider, backend, device, sides, settings, plan, campaign,
                          run, progress, aa=aa)
    finally:
        sampler.stop()
        progress.close()
    if sampler.note and sampler.note != start_note and sampler.samples == 0:
        print(sampler.note)  # the sampler ran but never produced a row: say why
    flags = telemetry_flags(campaign, device)
    for run in runs:
        if run.state == SWITCH_NO_IR_DIFF:
            for side in ("A", "B"):
                flags.setdefault((run.op.op, "1", side), []).append(SWITCH_NO_IR_DIFF)
    marked = rewrite_flags(campaign, flags)
    if marked:
        print(f"status.tsv: {marked} cell(s) flagged (throttle/drift or {SWITCH_NO_IR_DIFF})")
    return campaign, runs


def _run_operator(host, provider, backend, device, sides, settings, plan, campaign, run,
                  progress, *, aa: bool) -> None:
    op = run.op
    op_dir = campaign / op.op
    record_cell = op_dir / "r01" / "A"
    round_no = 0
    limit = plan.rounds or plan.max_rounds
    while round_no < limit:
        round_no += 1
        if round_no > (plan.rounds or MIN_ADAPTIVE_ROUNDS):
            progress.grow(2)  # adaptive rounds beyond the planned minimum
        results: dict[str, SideResult] = {}
        for side in side_order(round_no):
            recording = round_no == 1 and side == "A"
            req = settings.request(op=op, backend=backend, device=device,
                                   out_dir=op_dir / f"r{round_no:02d}" / side,
                                   env=sides.env(side), side=side,
                                   autotune_mode="record" if recording else "replay",
                                   replay_from=None if recording else record_cell)
            results[side] = run_side(host, provider, req, campaign, round_no=round_no,
                                     side=side, switch_value=sides.value(side), progress=progress)
        run.rounds_done = round_no
        bad = [s for s, r in results.items() if r.outcome is None or not r.outcome.ok]
        if bad:
            run.state, run.reason = "failed", f"round {round_no} side {','.join(bad)} failed or timed out"
            progress.line(f"{op.op}: stopped, {run.reason}; no report for this operator")
            return
        if round_no == 1 and not (aa or run.control or plan.allow_no_ir_diff):
            fa, fb = results["A"].ir.fingerprint, results["B"].ir.fingerprint
            if fa is None and fb is None:
                progress.line(f"{op.op}: note: no .ttgir on either side, so the identical-IR "
                              "check was skipped (not 'identical')")
            elif fa == fb:
                run.state, run.reason = SWITCH_NO_IR_DIFF, "identical TTGIR after round 1"
                progress.line(f"{SWITCH_NO_IR_DIFF} op={op.op}: skipped (pass --allow-no-ir-diff to time it anyway)")
                return
        if plan.rounds is None and round_no >= MIN_ADAPTIVE_ROUNDS:
            stop, why = _adaptive_stop(op_dir, round_no, plan)
            if stop:
                run.reason = why
                progress.line(f"{op.op}: adaptive stop after {round_no} rounds: {why}")
                break
    run.state = "done"


def round_latencies(op_dir: Path, rounds: int) -> dict[tuple, tuple[list[float], list[float]]]:
    """Per shape key: A and B gems latencies of each round, comparable pairs only.

    Pairs that fell back from graph capture, or whose sides used different timers,
    are a different instrument and are left out (see :mod:`zl_core.pairing`).
    """
    from zl_core.pairing import OK, pair_rows
    from zl_core.rows import read_rows

    series: dict[tuple, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for r in range(1, rounds + 1):
        round_dir = op_dir / f"r{r:02d}"
        for pair in pair_rows(read_rows(round_dir / "A"), read_rows(round_dir / "B")):
            if pair.cls == OK:
                series[pair.key][0].append(float(pair.a.gems_latency_ms))
                series[pair.key][1].append(float(pair.b.gems_latency_ms))
    return dict(series)


def _adaptive_stop(op_dir: Path, rounds: int, plan: RoundsPlan) -> tuple[bool, str]:
    shapes = [stats.shape_stats(a, b, threshold_pct=plan.threshold_pct, early_look=True)
              for a, b in round_latencies(op_dir, rounds).values() if len(a) == rounds]
    if not shapes:
        return rounds >= plan.max_rounds, "no comparable rows"
    return stats.should_stop(shapes, rounds_done=rounds, min_rounds=MIN_ADAPTIVE_ROUNDS,
                             max_rounds=plan.max_rounds)
