"""``zl compare``: one report across several A/B campaigns of the same operators (other
vendors, builds, switches, dates): per operator and campaign the verdict, its estimate
and interval and the IR change, and where the campaigns disagree.

Each campaign is judged as ``zl report`` judges it, and refused as it refuses it; the
conditions that differ between campaigns label them instead of a refusal.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zl_core.app import reports
from zl_core.app.reports import FORMATS
from zl_core.cli import _common
from zl_core.foundation.errors import UsageError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare", help="one report across several A/B campaigns of the same operators",
        description="Compare two or more A/B campaign folders (other devices, compiler builds, "
        "switches, dates): per operator and campaign the verdict, the estimate and interval it "
        "was decided on and the IR change, where the campaigns disagree, and what makes a claim "
        "incomparable. The conditions that differ label the campaigns. The report goes to stdout.")
    p.add_argument("campaigns", nargs="+", type=Path, metavar="CAMPAIGN", help="A/B campaign folders")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), md, html (self-contained page) or json")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--out", type=Path, metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--allow-caliber-mismatch", action="store_true",
                   help="compare even when a campaign's own cells differ in measurement conditions")
    p.add_argument("--threshold", type=_common.percentage, metavar="PCT",
                   help="practical effect threshold in percent for every campaign (default: each "
                   "campaign's own)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="compare interrupted or unfinished campaigns too (default: refuse, exit 6)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json conflicts with --format {args.format}; pick one")
    fmt = "json" if args.json else (args.format or "text")
    reports.check_report_out(args.out)
    model = reports.compare_model(args.campaigns, allow_mismatch=args.allow_caliber_mismatch,
                                  threshold_pct=args.threshold, allow_incomplete=args.allow_incomplete)
    _common.show_report(model, "compare", fmt=fmt, out=args.out)
    return 0
