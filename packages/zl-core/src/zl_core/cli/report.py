"""``zl report``: render a campaign (screen or A/B rounds) or one A/B pair of cells.

The caliber is compared before any number is shown: differing conditions print
one line per problem and exit 4 with no report, unless --allow-caliber-mismatch
(the problems are then still printed, and carried in the report).

Rendering lives in the optional zl-report package, imported only when a report is
rendered (``zl_core.report.render``); without it a plain built-in text form is printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zl_core.app import reports
from zl_core.app.reports import FAIL_ON, FORMATS
from zl_core.cli import _common
from zl_core.foundation.errors import UsageError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="render a screen, an A/B campaign, or one A/B pair of cells",
        description="Report a campaign folder (kind read from its campaign.json) or, with "
        "--ab, one A cell against one B cell. Refuses (exit 4) when the cells were measured "
        "under different conditions.")
    p.add_argument("path", nargs="?", type=Path, metavar="PATH", help="campaign folder")
    p.add_argument("--ab", nargs=2, type=Path, metavar=("A_DIR", "B_DIR"),
                   help="compare two cell folders (a single pair: deltas, no verdict)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), md, html (self-contained page) or json")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--link", metavar="URL",
                   help="md: where the HTML report is published (a CI artifact); the Markdown, "
                   "cut to GitHub's 65,536-character comment limit, ends with it")
    p.add_argument("--out", type=Path, metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--allow-caliber-mismatch", action="store_true",
                   help="report even when measurement conditions differ (problems still printed)")
    p.add_argument("--threshold", type=_common.percentage, metavar="PCT",
                   help="practical effect threshold in percent (default: the campaign's, else 1)")
    p.add_argument("--fail-on", action="append", choices=FAIL_ON, default=[],
                   help="exit 5 when an operator or shape verdict of this kind is present "
                   "(repeatable; any = faster, slower or inconclusive; failed = an operator "
                   "whose cell errored, timed out or failed preflight)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="report an interrupted or unfinished campaign, or a sealed one whose "
                   "files changed since its receipt (default: refuse, exit 6)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    fmt = _format(args)
    reports.check_report_out(args.out)
    model = reports.report_model(args.path, args.ab, allow_mismatch=args.allow_caliber_mismatch,
                                 threshold_pct=args.threshold, allow_incomplete=args.allow_incomplete)
    if args.link and fmt != "md":
        raise UsageError("--link goes with --format md (the pull-request form)")
    _common.show_report(model, "report", fmt=fmt, out=args.out, link=args.link)
    reports.verdict_gate(model, args.path, args.fail_on)
    return 0


def _format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json conflicts with --format {args.format}; pick one")
    return "json" if args.json else (args.format or "text")
