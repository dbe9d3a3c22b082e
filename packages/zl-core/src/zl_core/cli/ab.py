"""``zl ab``: paired rounds for the operators whose IR changed."""

from __future__ import annotations

import argparse

from zl_core.campaigns.ab_campaign import run_ab
from zl_core.campaigns.ab_task import RoundsPlan
from zl_core.campaigns.record import read_campaign
from zl_core.campaigns.screen_campaign import latest_screen, read_screen
from zl_core.cli import _common
from zl_core.cli.screen import common_setup, resolve_ops, settings_from
from zl_core.errors import UsageError
from zl_core.host import plugin_host
from zl_core.ir_verdict import IR_CHANGED, NO_IR_DIFF
from zl_core.opspec import OpSpec
from zl_core.switch_check import check_campaign_switch
from zl_core.switches import Sides, resolve_sides


def rounds_arg(text: str) -> int | None:
    if text == "auto":
        return None
    return _common.positive_int(text)


def add_parser(sub) -> None:
    p = sub.add_parser("ab", help="paired A/B rounds with pinned configs",
                       description="N rounds of fresh-process cells per operator, configs "
                       "pinned to round 1's record, side order alternating. Without --ops, "
                       "takes the IR_CHANGED operators of the latest screen.")
    p.add_argument("--ops", nargs="+", metavar="SPEC", help="op[:op_file[:dtypes]] ...")
    p.add_argument("--rounds", type=rounds_arg, default=6, metavar="N|auto",
                   help="paired rounds (default 6); auto adds rounds until decided")
    p.add_argument("--max-rounds", type=_common.positive_int, default=12, metavar="M",
                   help="budget for --rounds auto (default 12)")
    p.add_argument("--screen", type=_common.Path, help="screen campaign to take ops and switch from "
                   "(default: the latest under the runs root)")
    p.add_argument("--allow-no-ir-diff", action="store_true",
                   help="time operators even when round 1 shows identical TTGIR")
    p.add_argument("--aa", action="store_true", help="A/A: both sides with side A's environment")
    p.add_argument("--controls", type=int, default=0, metavar="K",
                   help="add K NO_IR_DIFF operators of the screen as A/A controls")
    p.add_argument("--threshold", type=_common.positive_float, default=1.0, metavar="PCT",
                   help="practical effect threshold in percent (default 1)")
    p.add_argument("--telemetry-interval", type=float, default=1.0, metavar="S",
                   help="telemetry sampling interval in seconds; 0 turns it off (default 1)")
    _common.add_campaign_args(p, default_timeout=2400.0)
    p.set_defaults(handler=run)


def _from_screen(args: argparse.Namespace, root) -> tuple[list[OpSpec], list[OpSpec], dict, object]:
    screen = args.screen or latest_screen(root)
    if screen is None:
        raise UsageError(f"no screen found under {root}; run 'zl screen --ops ...' first or "
                         "name operators with --ops")
    meta = read_campaign(screen)
    if meta.get("compile_only"):
        raise UsageError(f"screen {screen} was IR-only (--compile-only); A/B rounds need a device screen")
    rows = read_screen(screen)
    changed = [OpSpec.parse(r["op"] + ":" + r["op_file"] + (":" + r["dtypes"] if r["dtypes"] else ""))
               for r in rows if r["verdict"] == IR_CHANGED]
    quiet = [OpSpec.parse(r["op"] + ":" + r["op_file"] + (":" + r["dtypes"] if r["dtypes"] else ""))
             for r in rows if r["verdict"] == NO_IR_DIFF]
    return changed, quiet, meta, screen


def run(args: argparse.Namespace) -> int:
    host = plugin_host()
    for spec in args.ops or ():
        OpSpec.parse(spec)  # malformed specs fail before any probing
    if args.controls < 0:
        raise UsageError("--controls must be 0 or more")
    root = _common.runs_root(args.runs_root)
    screen = None
    controls: list[OpSpec] = []
    meta = None
    if not args.ops or args.controls:
        changed, quiet, meta, screen = _from_screen(args, root)
        if args.controls:
            if len(quiet) < args.controls:
                raise UsageError(f"--controls {args.controls}: screen {screen} has only "
                                 f"{len(quiet)} NO_IR_DIFF operator(s)")
            controls = quiet[: args.controls]
    if meta is not None and not args.ops:
        # Take the suite and switch of the screen unless given anew.
        if args.flaggems_dir is None and args.suite is None and meta.get("suite") == "flaggems":
            args.flaggems_dir = meta.get("source")
        if args.backend is None:
            args.backend = meta.get("backend")
        if args.device is None and meta.get("device") is not None:
            args.device = str(meta["device"])
    provider, source, backend, device = common_setup(host, args, "zl ab")
    if args.ops:
        ops = resolve_ops(provider, source, args.ops)
    else:
        ops = changed
        if not ops and not args.aa:
            print(f"zl ab: screen {screen} found no IR_CHANGED operator; nothing to time")
            return 0
        print(f"zl ab: using screen {screen}: {', '.join(o.op for o in ops) or '(none)'}")
    given_switch = args.switch or args.a_env or args.b_env or args.a_value or args.b_value
    if meta is not None and not given_switch:
        sides = Sides.from_json(meta)
        if args.aa:
            sides = Sides(switch=sides.switch, a_value=sides.a_value, b_value=sides.a_value,
                          a_env=sides.a_env, b_env=dict(sides.a_env))
        print(f"zl ab: switch {sides.switch} A={sides.a_value} B={sides.b_value} (from the screen)")
    else:
        sides = resolve_sides(backend, args.switch, args.a_value, args.b_value, args.a_env,
                              args.b_env, aa=args.aa)
    if not args.aa:
        check_campaign_switch(provider, sides, backend=backend, python=args.python,
                              target=args.target, switch_given=args.switch or sides.switch,
                              force=args.force_switch)
    plan = RoundsPlan(rounds=args.rounds, max_rounds=max(args.max_rounds, 3),
                      allow_no_ir_diff=args.allow_no_ir_diff, threshold_pct=args.threshold)
    campaign, runs = run_ab(host, provider, backend, device, sides, ops, controls,
                            settings_from(args, source), plan, root,
                            telemetry_interval=args.telemetry_interval, aa=args.aa, screen=screen)
    print(f"\nab: {campaign}")
    for r in runs:
        print(f"  {r.op.op}{' (control)' if r.control else ''}: {r.state}, {r.rounds_done} round(s)"
              + (f" - {r.reason}" if r.reason else ""))
    return _report(campaign, args)


def _report(campaign, args) -> int:
    """Print the campaign's report, as ``zl report`` would, and keep its JSON form."""
    from zl_core.cli import main as zl_main

    print()
    common = [str(campaign), "--threshold", str(args.threshold)]
    rc = zl_main(["report", *common])
    if rc == 0:
        zl_main(["report", *common, "--json", "--out", str(campaign / "report.json")])
    return rc
