"""``zl ab``: paired rounds for the operators whose IR changed."""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs

from zl_core import app
from zl_core.app import plugin_host, reports, seal
from zl_core.cli import _common, _config
from zl_core.cli._plans import estimate_line, plan_line
from zl_core.interface import contract


def rounds_arg(text: str) -> int | None:
    if text == "auto":
        return None
    return _common.round_count(text)


def add_parser(sub) -> None:
    p = sub.add_parser("ab", help="paired A/B rounds with pinned configs",
                       description="N rounds of fresh-process cells per operator, configs "
                       "pinned to round 1's record, side order counterbalanced (AB, BA, BA, AB, "
                       "...); an operator whose TTGIR is identical after round 1 is stopped "
                       "(SWITCH_NO_IR_DIFF). Without --ops, takes the IR_CHANGED operators of the "
                       "latest complete screen, with its switch, suite, backend and device. Prints "
                       "each operator's end with its verdict, estimate and interval, and the "
                       "report on stdout (report.json is kept beside the cells); progress goes "
                       "to stderr. Needs a device.")
    p.add_argument("--ops", nargs="+", metavar="SPEC",
                   help="[source:]op[@file][:op_file[:dtype,dtype...]] ... (default: the IR_CHANGED "
                   "operators of the screen)")
    p.add_argument("--rounds", type=rounds_arg, default=8, metavar="N|auto",
                   help="paired rounds, at least 4 (default 8: see docs/statistics.md for the "
                   "power it gives); auto looks at rounds 4, 6, 8, ... and stops an operator once "
                   "every shape is decided, or at --max-rounds")
    p.add_argument("--max-rounds", type=_common.round_count, default=12, metavar="M",
                   help="budget for --rounds auto (default 12)")
    p.add_argument("--screen", type=Path, help="screen campaign to take the operators (without "
                   "--ops), the switch, suite, backend and device and the --controls from "
                   "(default: the latest complete screen under the runs root)")
    p.add_argument("--plan", action="store_true",
                   help="print the operators and rounds this campaign would run and an estimate "
                   "of its time from this host's earlier A/B cells; run nothing")
    p.add_argument("--allow-no-ir-diff", action="store_true",
                   help="time operators even when round 1 shows identical TTGIR")
    p.add_argument("--aa", action="store_true", help="A/A: both sides with side A's environment")
    p.add_argument("--retuned", action="store_true",
                   help="also run side R, side B's environment with its own autotune picks "
                   "(recorded in its round 1, replayed after), and record side A's picks twice: "
                   "the report splits each shape's effect into pinned (B vs A), shipped (R vs A) "
                   "and the autotuner's part (R vs B), names the keys whose pick changed and reads "
                   "them against how often A's own picks reproduce (docs/statistics.md)")
    p.add_argument("--controls", type=int, default=0, metavar="K",
                   help="also time the screen's first K NO_IR_DIFF operators as controls, with the "
                   "switch flipped like the others: their TTGIR does not change, so a verdict on "
                   "one is a false positive (the report counts them)")
    p.add_argument("--threshold", type=_common.positive_float, default=1.0, metavar="PCT",
                   help="practical effect threshold in percent (default 1)")
    p.add_argument("--telemetry-interval", type=_common.interval_or_zero, default=1.0, metavar="S",
                   help="telemetry sampling interval in seconds; 0 turns it off (default 1)")
    # Rounds time cells on a device: --compile-only is taken only to be refused.
    _common.add_campaign_args(p, default_timeout=contract.DEFAULT_TIMEOUT_S,
                              default_start=contract.CAMPAIGN_START, compile_only=False,
                              timings=contract.TIMING_PLANS)
    p.add_argument("--pipeline", type=_common.pipeline, default=1, metavar="N",
                   help="cells of one device in flight: while one times, the next N-1 start, "
                   "import and collect; timing stays one cell at a time (a caliber field: a "
                   "report refuses to mix depths; default 1, one cell at a time)")
    p.add_argument("--gate-release", choices=contract.GATE_RELEASES, default=contract.GATE_AT_EXIT,
                   help="when a pipelined cell gives its device's timing gate back: exit, when its "
                   "process ends (its teardown and the end of its device context alone on the "
                   "device), or tests, once its last test ended and its device is idle (its "
                   "teardown beside the next cell's timing); a caliber field (default exit)")
    # Screens only; taken here so that zl ab can say why it refuses it.
    p.add_argument("--per-device", type=_common.per_device, default=1, help=argparse.SUPPRESS)
    _common.add_manifest_arg(p)
    p.set_defaults(handler=run)
    _config.add_config_args(p, "ab")


def options_from(args: argparse.Namespace) -> app.AbOptions:
    options = app.AbOptions(ops=tuple(args.ops or ()), where=_common.where_from(args),
                            measure=_common.measurement_from(args), switch=_common.switch_from(args),
                            runs_root=args.runs_root, rounds=args.rounds, max_rounds=args.max_rounds,
                            screen=args.screen, allow_no_ir_diff=args.allow_no_ir_diff, aa=args.aa,
                            controls=args.controls, threshold_pct=args.threshold, retuned=args.retuned,
                            telemetry_interval=args.telemetry_interval, lanes=_common.lanes_from(args))
    if args.manifest is not None:
        return seal.frozen_options("ab", args.manifest, options)
    return options


def run(args: argparse.Namespace) -> int:
    args, config = _config.apply(args)
    if args.plan:
        return print_plan(app.ab_plan(plugin_host(), options_from(args)))
    done = app.ab(plugin_host(), attrs.evolve(options_from(args), config=config))
    if done.campaign is None:  # the answer: nothing to time
        print(f"zl ab: screen {done.screen} found no IR_CHANGED operator; nothing to time")
        return 0
    print(f"\nab: {done.campaign}")
    for r in done.runs:  # each operator's end, and its verdict with the numbers it rests on
        verdict = reports.verdict_said(done.report, r.op.op)
        print(f"  {r.op.op}{' (control)' if r.control else ''}: {r.state}, {r.rounds_done} round(s)"
              + (f": {verdict}" if verdict else "") + (f" - {r.reason}" if r.reason else ""))
    # The campaign's report, as 'zl report' prints it, and its JSON kept beside the cells.
    print()
    # the campaign finished: report.json and receipts written, a frozen campaign sealed
    if done.report is not None:
        _common.show_report(done.report, "ab")
    return _common.failed_exit(done.failed, "ab")


def print_plan(plan: app.AbPlan) -> int:
    est = plan.estimate
    rounds = f"at least {plan.rounds} rounds (auto)" if plan.adaptive else f"{plan.rounds} rounds"
    where = f" from screen {plan.screen}" if plan.screen and plan.ops else ""
    lane = (f", pipeline {plan.pipeline} (each cell's start, imports and collection beside "
            "another's hold of the device)" if plan.pipeline > 1 else "")
    sides = " (sides A, B and R, and A's second record)" if plan.retuned else ""
    print(f"zl ab --plan: {len(plan.ops)} operator(s){where}, {len(plan.controls)} control(s), {rounds}: "
          f"{plan.cells_per_op} cells each{sides}{lane}; estimates from {est.campaigns_read} earlier A/B "
          "campaign(s) on this host")
    if not plan.ops and not plan.controls:
        print("nothing to time: the screen found no IR_CHANGED operator")
        return 0
    for o in est.ops:
        print(plan_line(o, max([len(x.op) for x in est.ops] + [2])))
    print(estimate_line(est, never="an A/B cell", lanes="device(s)"))
    return 0
