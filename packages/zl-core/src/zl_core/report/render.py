"""A report model as text: through the optional zl-report package where installed,
else JSON or a minimal built-in text form."""

from __future__ import annotations

import json

from zl_core.foundation.errors import UsageError

FORMATS = ("text", "md", "html", "json")


def render(model: dict, fmt: str, *, color: bool = False, link: str | None = None) -> str:
    """The report in ``fmt`` via zl_report when installed; JSON and plain text without it.
    ``link``: where the HTML report is published (the Markdown ends with it)."""
    if fmt == "json":
        return json.dumps(model, indent=2, default=str)
    try:
        import zl_report  # optional: zl_core never imports it at module import
    except ImportError:
        pass
    else:
        return zl_report.render(model, fmt, color=color, link=link)
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
        for r in model["rows"]:
            est = (r["stats"] or {}).get("estimate_pct")
            lines.append(f"  {r['op']} {r['shape']} [{r['segment']}] "
                         f"{'' if est is None else f'{est:+.2f}% '}{r['verdict'] or r['reason']}")
        for item in summary["no_report"]:
            lines.append(f"no report for {item['op']}: {item['reason']}")
        for item in summary["skipped"]:
            lines.append(f"skipped {item['op']}: {item['reason']}")
        if summary["controls"]:
            lines.append(summary["controls"]["text"])
        lines += [f"note: {n}" for n in model["notes"]]
        # The answer last, where a terminal leaves it in view: each operator's verdict and
        # the estimate and interval it was decided on.
        for op in summary["operators"]:
            est = op.get("estimate")
            said = (f" {est['estimate_pct']:+.2f}% [{est['ci_low_pct']:+.2f}%, {est['ci_high_pct']:+.2f}%]"
                    if est else "")
            lines.append(f"{op['op']}{' (control)' if op['control'] else ''}: {op['verdict']}{said}"
                         f" - {op['text']}")
        return "\n".join(lines) + "\n"
    else:
        for r in model["rows"]:
            d = r["delta"]
            rng = (f" {d['label']}: {d['min_pct']:+.2f}% .. {d['max_pct']:+.2f}%" if d else "")
            lines.append(f"  {r['op']}: {r['verdict']}{rng}")
    lines += [f"note: {n}" for n in model["notes"]]
    return "\n".join(lines) + "\n"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.6f}"
