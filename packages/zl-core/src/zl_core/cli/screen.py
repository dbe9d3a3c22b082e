"""``zl screen``: does the switch change each operator's TTGIR? One pinned pair per op."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import attrs

from zl_core import app
from zl_core.app import LAUNCH_FLOOR, plugin_host, seal
from zl_core.cli import _common, _config
from zl_core.cli._plans import estimate_line, plan_line
from zl_core.interface import contract

log = logging.getLogger(__name__)


def add_parser(sub) -> None:
    p = sub.add_parser("screen", help="screen operators: did the switch change their TTGIR?",
                       description="Per operator: side A records its autotune picks, side B "
                       "replays them with the switch flipped; verdict from TTGIR fingerprints. "
                       "Prints the verdict table on stdout; progress goes to stderr. Without a "
                       "device, the builtin suite runs the IR-only screen (--compile-only).")
    p.add_argument("--ops", nargs="+", metavar="SPEC",
                   help="[source:]op[@file][:op_file[:dtype,dtype...]] ... (default: every "
                   "operator of the suite)")
    p.add_argument("--dismiss", type=Path, metavar="FILE",
                   help="operators never to run, one 'op  reason' a line: listed as SKIPPED")
    p.add_argument("--plan", action="store_true",
                   help="list the operators the screen would run and estimate its time from "
                   "this host's earlier screens; run nothing, write nothing")
    _common.add_campaign_args(p, default_timeout=contract.DEFAULT_TIMEOUT_S, default_replay_ms=contract.SCREEN_REPLAY_MS,
                              default_timing=contract.SCREEN_TIMING,
                              default_start=contract.CAMPAIGN_START)
    p.add_argument("--per-device", type=_common.per_device, default=1, metavar="N",
                   help="cells run at once on each device: their imports, compilation and IR dump "
                   "overlap; their latency deltas are then indicative only (recorded as "
                   "concurrency; default 1; A/B rounds always run one)")
    _common.add_manifest_arg(p)
    p.set_defaults(handler=run)
    _config.add_config_args(p, "screen")


def options_from(args: argparse.Namespace) -> app.ScreenOptions:
    options = app.ScreenOptions(ops=tuple(args.ops or ()), dismiss=args.dismiss,
                                where=_common.where_from(args),
                                measure=_common.measurement_from(args),
                                switch=_common.switch_from(args), runs_root=args.runs_root,
                                lanes=_common.lanes_from(args))
    if args.manifest is not None:
        return seal.frozen_options("screen", args.manifest, options)
    return options


#: Printed under the verdicts, so the table explains itself.
TABLE_LEGEND = ("kernels A/B: distinct Triton kernels in each side's TTGIR (the cell lines' "
                "ttgir=N counts .ttgir files, one per kernel variant); convert_layout A/B: layout "
                "conversions in the variants launched more than "
                f"{LAUNCH_FLOOR} times (what the timer measured; 'all' adds input construction), "
                "which explain a change but never decide the verdict")


def run(args: argparse.Namespace) -> int:
    args, config = _config.apply(args)
    options = attrs.evolve(options_from(args), config=config)
    if args.plan:
        return print_plan(app.screen_plan(plugin_host(), options))
    done = app.screen(plugin_host(), options)
    rows = done.rows
    width = max(len(r["op"]) for r in rows) if rows else 2
    print(f"\nscreen: {done.campaign}" + ("  (IR-only: compiled, nothing timed)" if done.compile_only else ""))
    for r in rows:
        print(f"  {r['op']:<{width}}  {r['verdict']:<11} kernels A/B {r['kernels_a']}/{r['kernels_b']}"
              f"  convert_layout A/B {_converts(r)}"
              + (f"  ({r['notes']})" if r["notes"] else ""))
    print(TABLE_LEGEND)
    if done.compile_only:
        # zl ab refuses an IR-only screen: rounds need a screen whose cells ran on a device.
        print(f"next: zl report {done.campaign}   (A/B rounds need a screen on a device)")
    else:
        print(f"next: zl report {done.campaign}   then: zl ab --rounds 8")
    return _common.failed_exit(done.failed, "screen")


def _converts(row: dict) -> str:
    scoped = f"{row['convert_layouts_a']}/{row['convert_layouts_b']}"
    every = f"{row.get('convert_layouts_all_a', '')}/{row.get('convert_layouts_all_b', '')}"
    return scoped if every in (scoped, "/") else f"{scoped} (all {every})"


def print_plan(plan: app.ScreenPlan) -> int:
    est = plan.estimate
    if plan.note:
        log.warning("zl screen --plan: %s", plan.note)
    width = max([len(o.op) for o in est.ops] + [2])
    mode = "IR-only (compiled, nothing timed)" if plan.compile_only else "timed"
    print(f"zl screen --plan: {len(plan.ops)} operator(s) on {plan.backend}, {mode}, "
          f"{est.lanes} lane(s); estimates from {est.campaigns_read} earlier screen(s) on this host")
    for o in est.ops:
        print(plan_line(o, width))
    for op, why in plan.skipped.items():
        print(f"  {op:<{width}}  SKIPPED ({why})")
    print(estimate_line(est, never="a screen", lanes="lane(s)"))
    return 0
