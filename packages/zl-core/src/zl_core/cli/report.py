"""``zl report``: render a campaign (screen or A/B rounds) or one A/B pair of cells.

The caliber is compared before any number is shown: differing conditions print
one line per problem and exit 4 with no report, unless --allow-caliber-mismatch
(the problems are then still printed, and carried in the report).

Rendering lives in the optional zl-report package, imported only here and only
when a report is rendered; without it a plain built-in text form is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from zl_core import report as model_builder
from zl_core.cli import _common
from zl_core.errors import BadInputError, UsageError, VerdictGateError

FORMATS = ("text", "md", "html", "json")
FAIL_ON = ("slower", "faster", "inconclusive", "any")


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
    p.add_argument("--out", type=Path, metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--allow-caliber-mismatch", action="store_true",
                   help="report even when measurement conditions differ (problems still printed)")
    p.add_argument("--threshold", type=_common.percentage, metavar="PCT",
                   help="practical effect threshold in percent (default: the campaign's, else 1)")
    p.add_argument("--fail-on", action="append", choices=FAIL_ON, default=[],
                   help="exit 5 when an operator or shape verdict of this kind is present "
                   "(repeatable; any = faster, slower or inconclusive)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    fmt = _format(args)
    if args.ab and args.path:
        raise UsageError("give either a campaign PATH or --ab A_DIR B_DIR, not both")
    if args.ab:
        model = model_builder.build_pair(args.ab[0], args.ab[1],
                                         allow_mismatch=args.allow_caliber_mismatch,
                                         threshold_pct=args.threshold)
    elif args.path:
        model = model_builder.build(args.path, allow_mismatch=args.allow_caliber_mismatch,
                                    threshold_pct=args.threshold)
    else:
        raise UsageError("nothing to report: give a campaign folder, or --ab A_DIR B_DIR")

    for problem in model["caliber_problems"]:
        print(f"zl report: caliber mismatch (allowed by --allow-caliber-mismatch): {problem}",
              file=sys.stderr)
    for warning in model["caliber_warnings"]:
        print(f"zl report: caliber warning: {warning}", file=sys.stderr)

    _emit(model, fmt, args.out)

    if args.fail_on:
        if model["kind"] != "rounds":
            print(f"zl report: note: a {model['kind']} report carries no FASTER/SLOWER/"
                  "INCONCLUSIVE verdicts, so --fail-on has nothing to gate", file=sys.stderr)
        hits = model_builder.gate_hits(model, args.fail_on)
        if hits:
            shown = "; ".join(hits[:5]) + (f"; and {len(hits) - 5} more" if len(hits) > 5 else "")
            raise VerdictGateError(f"--fail-on {','.join(args.fail_on)}: {len(hits)} verdict(s) "
                                   f"present: {shown}")
    return 0


def _format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json conflicts with --format {args.format}; pick one")
    return "json" if args.json else (args.format or "text")


def _emit(model: dict, fmt: str, out: Path | None) -> None:
    to_terminal = out is None and fmt == "text" and sys.stdout.isatty()
    text = render(model, fmt, color=to_terminal)
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        out.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot write {out}: {exc.strerror}; check the path") from None
    print(f"zl report: wrote {out}", file=sys.stderr)


def render(model: dict, fmt: str, *, color: bool = False) -> str:
    """The report in ``fmt`` via zl_report when installed; JSON and plain text without it."""
    if fmt == "json":
        return json.dumps(model, indent=2, default=str)
    try:
        import zl_report  # optional: zl_core never imports it at module import
    except ImportError:
        zl_report = None
    if zl_report is not None:
        return zl_report.render(model, fmt, color=color)
    if fmt != "text":
        raise UsageError(f"--format {fmt} needs the zl-report package: pip install zl-report "
                         "(text and json work without it)")
    return plain_text(model)


def plain_text(model: dict) -> str:
    """A minimal text form, used only when zl-report is not installed."""
    lines = [model["title"]]
    common = model["caliber"]["common"]
    lines.append("caliber: " + " ".join(f"{k}={v}" for k, v in common.items() if v not in (None, "")))
    for p in model["caliber_problems"]:
        lines.append(f"caliber mismatch (allowed): {p}")
    kind, summary = model["kind"], model["summary"]
    if kind == "pair":
        for r in model["rows"]:
            d = "" if r["delta_pct"] is None else f"{r['delta_pct']:+.2f}%"
            lines.append(f"  {r['shape']}  A={_ms(r['a_latency_ms'])} B={_ms(r['b_latency_ms'])} "
                         f"{d} [{r['class']}] {r['reason']}".rstrip())
        c = summary["comparable"]
        if c["n"]:
            lines.append(f"comparable rows: {c['n']}, median delta {c['median_pct']:+.2f}% "
                         f"(range {c['min_pct']:+.2f}% .. {c['max_pct']:+.2f}%; positive = B faster)")
    elif kind == "rounds":
        for op in summary["operators"]:
            lines.append(f"{op['op']}{' (control)' if op['control'] else ''}: {op['verdict']} - {op['text']}")
        for r in model["rows"]:
            med = (r["stats"] or {}).get("median_delta_pct")
            lines.append(f"  {r['op']} {r['shape']} [{r['segment']}] "
                         f"{'' if med is None else f'{med:+.2f}% '}{r['verdict'] or r['reason']}")
        for item in summary["no_report"]:
            lines.append(f"no report for {item['op']}: {item['reason']}")
        for item in summary["skipped"]:
            lines.append(f"skipped {item['op']}: {item['reason']}")
        if summary["controls"]:
            lines.append(summary["controls"]["text"])
    else:
        for r in model["rows"]:
            d = r["delta"]
            rng = (f" {d['label']}: {d['min_pct']:+.2f}% .. {d['max_pct']:+.2f}%" if d else "")
            lines.append(f"  {r['op']}: {r['verdict']}{rng}")
    lines += [f"note: {n}" for n in model["notes"]]
    return "\n".join(lines) + "\n"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.6f}"
