"""``zl reaccount``: a sealed A/B campaign's classes under another rule, from its sealed
files alone (no device), written outside the run; a workload may be demoted, never promoted.

    zl reaccount runs/ab_X --out reaccounted/ --launch-floor 8
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zl_core.app import seal
from zl_core.cli import _common
from zl_core.foundation.errors import UsageError


def add_parser(sub) -> None:
    p = sub.add_parser("reaccount", help="re-derive a sealed campaign's classes under another rule",
                       description="Re-derive the classes (G/C/B/R/K/X) of a sealed A/B campaign "
                       "from its sealed files, without a device, under another launch floor or "
                       "thresholds; written under --out (never inside a run). A workload may be "
                       "demoted, never promoted.")
    p.add_argument("campaign", type=Path, help="a sealed A/B campaign (zl ab --manifest)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="a new or empty folder")
    p.add_argument("--launch-floor", type=int, default=None, metavar="N",
                   help="count only TTGIR variants launched more than N times (default: the sealed rule's)")
    p.add_argument("--gain-pct", type=_common.positive_float, default=None, metavar="PCT",
                   help="class G's gain in both run orders (default: the sealed rule's)")
    p.add_argument("--regression-pct", type=_common.positive_float, default=None, metavar="PCT",
                   help="class R's regression in both run orders (default: the sealed rule's)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.launch_floor is not None and args.launch_floor < 0:
        raise UsageError("--launch-floor must be 0 or more")
    derived = seal.reaccount_campaign(args.campaign, args.out, launch_floor=args.launch_floor,
                                      gain_pct=args.gain_pct, regression_pct=args.regression_pct)
    rule = derived["rule"]
    print(f"reaccounted {args.campaign} at launch floor {rule['launch_floor']}, G at "
          f"{rule['gain_pct']:g}%, R at {rule['regression_pct']:g}%")
    for change in derived["changes"]:
        kept = "" if change["taken"] == change["derived"] else " (promotion refused: stays)"
        print(f"  {change['op']}: {change['sealed']} -> {change['derived']}{kept}")
    if not derived["changes"]:
        print("  no class changed")
    print("classes: " + ", ".join(f"{k} {v}" for k, v in sorted(derived["counts"].items())))
    print(f"written: {args.out}")
    return 0
