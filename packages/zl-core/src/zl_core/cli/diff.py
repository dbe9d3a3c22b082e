"""``zl diff CAMPAIGN OP``: what the switch changed in one operator's TTGIR.

The summary first (ops added and removed, layouts, launch attributes, shared
memory, and which shapes and configs each changed kernel serves), then with
``--full`` the canonical unified diff of every changed variant: source locations
stripped and SSA values named by what defines them, so only real changes show.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zl_core.app.diff import operator_diff
from zl_core.cli import _common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "diff", help="what the switch changed in one operator's TTGIR (summary, --full diff)",
        description="Summarise how side B's TTGIR differs from side A's for one operator of a "
        "screen or A/B campaign (A/B: round 1), then, with --full, print the canonical unified "
        "diff. Exit 2 on an unknown campaign, operator or kernel.")
    p.add_argument("campaign", metavar="CAMPAIGN",
                   help="campaign folder, or its name under the runs root")
    p.add_argument("op", metavar="OP", help="operator name as in the campaign")
    p.add_argument("--kernel", metavar="K", help="only this kernel (as in ttgir/<shape>/<kernel>/)")
    p.add_argument("--full", action="store_true",
                   help="also print the canonical unified diff of every changed variant")
    p.add_argument("--context", type=_common.positive_int, default=3, metavar="N",
                   help="lines of context around each change (default 3)")
    p.add_argument("--runs-root", type=Path,
                   help="where campaign names are looked up (default: $ZL_RUNS_ROOT or ./runs)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    found = operator_diff(args.campaign, args.op, runs=args.runs_root, kernel=args.kernel,
                          full=args.full, context=args.context)
    out = sys.stdout
    print(f"{args.op} in {found.campaign.name}: A={found.a_dir.relative_to(found.campaign)} "
          f"B={found.b_dir.relative_to(found.campaign)}", file=out)
    for line in found.summary:
        print(f"  {line}", file=out)
    for g in found.groups:
        print(f"\n{g.kernel}: {len(g.files)} of {g.of_variants} variant(s), "
              f"{g.change.status.replace('_', ' ')}", file=out)
        print(f"  shapes: {', '.join(g.shapes)}", file=out)
        print(f"  variants: {', '.join(g.variants)}", file=out)
        if g.launch:
            print(f"  compiled with: {'; '.join(g.launch)}", file=out)
        for config in g.configs:
            print(f"  autotune pick: {config}", file=out)
        for line in g.lines:
            print(f"  {line}", file=out)
    if not args.full:
        if found.changed:
            print(f"\ncanonical diff of {len(found.changed)} variant(s): zl diff {args.campaign} "
                  f"{args.op}{' --kernel ' + args.kernel if args.kernel else ''} --full", file=out)
        return 0
    for line in found.diff:
        print(line, file=out)
    return 0
