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

from zl_core.app import resolve
from zl_core.cli import _common
from zl_core.errors import BadInputError
from zl_core.ir import compare_cells, unified_diff
from zl_core.ir.compare import CHANGED, ONLY_A, ONLY_B
from zl_core.ir.locate import op_cells, resolve_campaign
from zl_core.ir.rollup import operator_lines


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
    campaign = resolve_campaign(args.campaign, resolve.runs_root(args.runs_root))
    a_dir, b_dir = op_cells(campaign, args.op)
    cmp = compare_cells(a_dir, b_dir)
    groups = list(cmp.groups)
    if args.kernel:
        kernels = sorted({p.split("/")[1] for p in _all_files(a_dir, b_dir) if p.count("/") >= 2})
        if args.kernel not in kernels:
            raise BadInputError(f"operator {args.op!r} has no kernel {args.kernel!r}; its kernels: "
                                f"{', '.join(kernels) or 'none (no TTGIR dumped)'}")
        groups = [g for g in groups if g.kernel == args.kernel]
    out = sys.stdout
    print(f"{args.op} in {campaign.name}: A={a_dir.relative_to(campaign)} "
          f"B={b_dir.relative_to(campaign)}", file=out)
    lines = operator_lines(cmp) if not args.kernel else []
    for line in lines or [cmp.headline()]:
        print(f"  {line}", file=out)
    for g in groups:
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
    changed = [f for g in groups if g.change.status in (CHANGED, ONLY_A, ONLY_B) for f in g.files]
    if not args.full:
        if changed:
            print(f"\ncanonical diff of {len(changed)} variant(s): zl diff {args.campaign} "
                  f"{args.op}{' --kernel ' + args.kernel if args.kernel else ''} --full", file=out)
        return 0
    for rel in changed:
        print(file=out)
        for line in unified_diff(a_dir, b_dir, rel, context=args.context):
            print(line, file=out)
    return 0


def _all_files(a_dir, b_dir) -> set[str]:
    from zl_core.ttgir_layout import TTGIR_DIR

    out = set()
    for cell in (a_dir, b_dir):
        root = cell / TTGIR_DIR
        if root.is_dir():
            out |= {p.relative_to(root).as_posix() for p in root.rglob("*.ttgir")}
    return out
