"""``zl screen``: does the switch change each operator's TTGIR? One pinned pair per op."""

from __future__ import annotations

import argparse
from pathlib import Path

from zl_core import app, contract
from zl_core.cli import _common
from zl_core.host import plugin_host


def add_parser(sub) -> None:
    p = sub.add_parser("screen", help="screen operators: did the switch change their TTGIR?",
                       description="Per operator: side A records its autotune picks, side B "
                       "replays them with the switch flipped; verdict from TTGIR fingerprints.")
    p.add_argument("--ops", nargs="+", metavar="SPEC",
                   help="op[:op_file[:dtype,dtype...]] ... (default: every op of the suite)")
    p.add_argument("--dismiss", type=Path, metavar="FILE",
                   help="operators never to run, one 'op  reason' a line: listed as SKIPPED")
    _common.add_campaign_args(p, default_timeout=2400.0, default_replay_ms=contract.SCREEN_REPLAY_MS)
    p.set_defaults(handler=run)


def options_from(args: argparse.Namespace) -> app.ScreenOptions:
    return app.ScreenOptions(ops=tuple(args.ops or ()), dismiss=args.dismiss,
                             where=_common.where_from(args),
                             measure=_common.measurement_from(args),
                             switch=_common.switch_from(args), runs_root=args.runs_root,
                             lanes=_common.lanes_from(args))


#: Printed under the verdicts, so the table explains itself.
TABLE_LEGEND = ("kernels A/B: distinct Triton kernels in each side's TTGIR (the cell lines' "
                "ttgir=N counts .ttgir files, one per kernel variant); convert_layout A/B: layout "
                "conversions in it, which explain a change but never decide the verdict")


def run(args: argparse.Namespace) -> int:
    done = app.screen(plugin_host(), options_from(args))
    rows = done.rows
    width = max(len(r["op"]) for r in rows) if rows else 2
    print(f"\nscreen: {done.campaign}" + ("  (IR-only: compiled, nothing timed)" if done.compile_only else ""))
    for r in rows:
        print(f"  {r['op']:<{width}}  {r['verdict']:<11} kernels A/B {r['kernels_a']}/{r['kernels_b']}"
              f"  convert_layout A/B {r['convert_layouts_a']}/{r['convert_layouts_b']}"
              + (f"  ({r['notes']})" if r["notes"] else ""))
    print(TABLE_LEGEND)
    if done.compile_only:
        # zl ab refuses an IR-only screen: rounds need a screen whose cells ran on a device.
        print(f"next: zl report {done.campaign}   (A/B rounds need a screen on a device)")
    else:
        print(f"next: zl report {done.campaign}   then: zl ab --rounds 8")
    return _common.failed_exit(done.failed, "screen")
