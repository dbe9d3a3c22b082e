"""The answer a report leads with: every operator with its verdict, worst regression
first, and the estimate and interval that verdict was decided on (a rounds report), or
its IR verdict (a screen); with the headline figures and where the numbers come from.

The layout puts these blocks in :attr:`Document.answer`; every form draws them where
its reader looks first, and the Markdown cut never drops them (it names by verdict
whatever rows it cannot keep).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zl_core.foundation.verdicts import (
    DECIDED,
    FAILED,
    FASTER,
    INCONCLUSIVE,
    IR_CHANGED,
    MIXED,
    NO_CHANGE,
    NO_IR_DIFF,
    NO_ROWS,
    NO_TRITON,
    SKIPPED,
    SLOWER,
    TIMEOUT,
)

from zl_report.blocks import Block, Heading, Para, Table
from zl_report.format import (
    FOLD_ABOVE,
    VERDICT_TONES,
    anchor,
    pct,
    ratio,
    span,
)
from zl_report.sections import overview

HEADING = "Verdicts"
#: Operator verdicts in the order a reader must see them: regressions first.
ROUNDS_ORDER = (SLOWER, MIXED, FASTER, INCONCLUSIVE, NO_CHANGE)
#: The verdicts the pull-request form always gives a row (the rest it may name).
CALLED = (SLOWER, MIXED, FASTER)
SCREEN_ORDER = (IR_CHANGED, FAILED, TIMEOUT, NO_ROWS, SKIPPED, NO_TRITON, NO_IR_DIFF)


def _rank(order: Sequence[str], verdict: object) -> int:
    return order.index(verdict) if verdict in order else len(order)


def estimate_of(op: Mapping) -> Mapping:
    """The estimate and interval an operator's verdict was decided on ({} where none)."""
    return op.get("estimate") or {}


def ordered_operators(ops: Sequence[Mapping]) -> list[Mapping]:
    """Operators worst first: regressions (the largest slowdown first), mixed, faster
    (the largest gain first), undecided, unchanged; controls after the rest."""
    def key(op: Mapping) -> tuple:
        est = estimate_of(op).get("estimate_pct")
        value = est if isinstance(est, int | float) else 0.0
        verdict = op.get("verdict")
        return (bool(op.get("control")), _rank(ROUNDS_ORDER, verdict),
                -value if verdict == FASTER else value, str(op.get("op")))
    return sorted(ops, key=key)


def ordered_rows(rows: Sequence[Mapping]) -> list[Mapping]:
    """Screen rows by verdict (IR changed first, then failures), in plan order within one."""
    return sorted(rows, key=lambda r: _rank(SCREEN_ORDER, r.get("verdict")))


def _shapes_decided(op: Mapping) -> str:
    counts = (op.get("operator") or {}).get("counts") or {}
    decided = sum(int(counts.get(v) or 0) for v in DECIDED)
    return f"{decided}/{op.get('counted_shapes', 0)}"


def ir_short(ir: Mapping | None) -> str:
    """Whether the IR changed, in a word or two."""
    if not ir:
        return "-"
    if ir.get("raw_equal"):
        return "identical"
    return "names only" if ir.get("canonical_equal") else "changed"


def named_by_verdict(names: Sequence[tuple[str, str]], what: str) -> list[Para]:
    """One line per verdict naming ``(name, verdict)`` pairs: ``SLOWER (2): a, b``."""
    by: dict[str, list[str]] = {}
    for name, verdict in names:
        by.setdefault(verdict, []).append(name)
    return [Para(text=f"{what} {verdict} ({len(ops)}): {', '.join(ops)}",
                 tone=VERDICT_TONES.get(verdict) or "muted") for verdict, ops in by.items()]


def rounds_answer(model: Mapping, *, brief: bool) -> list[Block]:
    s = model["summary"]
    ops = ordered_operators(s.get("operators") or [])
    blocks: list[Block] = [Heading(text=HEADING, level=2), *overview(model)]
    geo = s.get("geomean")
    if geo:
        blocks.append(Para(text=f"geometric mean over the {geo['shapes']} decided shape(s): B "
                           f"{ratio(geo['delta_pct'])} ({pct(geo['delta_pct'])})"))
    missing = [f"{x['op']} ({x['reason']})" for x in s.get("no_report") or ()]
    if missing:
        blocks.append(Para(text="no verdict, the operator did not complete: " + "; ".join(missing),
                           tone="bad"))
    skipped = [f"{x['op']} ({x['reason']})" for x in s.get("skipped") or ()]
    if skipped:
        blocks.append(Para(text="not timed: " + "; ".join(skipped), tone="muted"))
    shown = list(ops)
    if brief and len(ops) > FOLD_ABOVE:  # a comment keeps a row for every operator that moved
        shown = [o for o in ops if o["verdict"] in CALLED and not o.get("control")]
        blocks += named_by_verdict([(_name(o), o["verdict"]) for o in ops if o not in shown],
                                   "no row here:")
    if not ops:
        blocks.append(Para(text="no operator has a verdict", tone="muted"))
        return blocks
    rows = tuple((_name(o), o["verdict"], pct(estimate_of(o).get("estimate_pct")),
                  span(estimate_of(o).get("ci_low_pct"), estimate_of(o).get("ci_high_pct")),
                  ratio(estimate_of(o).get("estimate_pct")), _shapes_decided(o), ir_short(o.get("ir")))
                 for o in shown)
    blocks.append(Table(headers=("operator", "verdict", "estimate", "interval", "B vs A",
                                 "shapes decided", "IR"),
                        rows=rows, align="llrrrrl",
                        tones=tuple(VERDICT_TONES.get(o["verdict"]) for o in shown),
                        interactive=True, links=tuple(anchor(o["op"]) for o in shown)))
    return blocks


def _name(op: Mapping) -> str:
    return str(op["op"]) + (" (control)" if op.get("control") else "")


def screen_answer(model: Mapping, *, brief: bool) -> list[Block]:
    s = model["summary"]
    rows = ordered_rows(model["rows"])
    blocks: list[Block] = [Heading(text=HEADING, level=2), *overview(model)]
    shown = list(rows)
    if brief and len(rows) > FOLD_ABOVE:
        shown = [r for r in rows if r["verdict"] == IR_CHANGED]
        blocks += named_by_verdict([(r["op"], r["verdict"]) for r in rows if r not in shown],
                                   "no row here:")
    cells = []
    for r in shown:
        d = r.get("delta")
        row = [r["op"], r["verdict"], ir_short(r.get("ir")), _ab(r, "kernels"), _converts(r)]
        if not s.get("compile_only"):
            row.insert(3, _ab(r, "rows"))
            row.append(f"{d['label']}: {span(d['min_pct'], d['max_pct'])}" if d else "")
        if not brief:
            row.append(str(r.get("notes") or ""))
        cells.append(tuple(row))
    headers = ["operator", "verdict", "IR", "kernels A/B", "converts A/B"]
    if not s.get("compile_only"):
        headers.insert(3, "rows A/B")
        headers.append("delta range")
    if not brief:
        headers.append("notes")
    blocks.append(Table(headers=tuple(headers), rows=tuple(cells), align="l" * len(headers),
                        tones=tuple(VERDICT_TONES.get(r["verdict"]) for r in shown),
                        interactive=True,
                        links=tuple(anchor(r["op"]) if (r.get("ir") or {}).get("lines") else ""
                                    for r in shown)))
    return blocks


def _ab(row: Mapping, stem: str) -> str:
    return f"{row.get(stem + '_a', '-')}/{row.get(stem + '_b', '-')}"


def _converts(row: Mapping) -> str:
    """Converts of the measured variants, and of every variant where that differs."""
    scoped = _ab(row, "convert_layouts")
    if row.get("convert_layouts_all_a") in (None, "") or _ab(row, "convert_layouts_all") == scoped:
        return scoped
    return f"{scoped} (all {_ab(row, 'convert_layouts_all')})"


def pair_answer(model: Mapping) -> list[Block]:
    """A pair has no verdict (one pair has no noise): its comparable rows' median says what it can."""
    s = model["summary"]
    c = s["comparable"]
    if not c["n"]:
        text = "no verdict, and no comparable rows (same timer, no fallback, SUCCESS on both sides)"
        return [Heading(text=HEADING, level=2), Para(text=text, tone="warn")]
    threshold = s.get("threshold_pct")
    text = (f"no verdict (one pair has no noise estimate; zl ab gives one): {c['n']} comparable "
            f"row(s), median delta {pct(c['median_pct'])} (B {ratio(c['median_pct'])}), range "
            f"{span(c['min_pct'], c['max_pct'])}; {s['beyond_threshold']['b_faster']} beyond "
            f"+{threshold:g}%, {s['beyond_threshold']['b_slower']} beyond -{threshold:g}%")
    return [Heading(text=HEADING, level=2), Para(text=text)]


def provenance_blocks(summary: Mapping) -> list[Block]:
    """Where the numbers come from: zl, compiler build, provider commit, driver, host, dates."""
    p = summary.get("provenance")
    if not p:
        return []

    def said(key: str, missing: str = "not recorded") -> str:
        return ", ".join(p.get(key) or ()) or missing

    dates = (f"{p.get('first_started') or '?'} to {p.get('last_finished') or '?'}"
             if p.get("first_started") or p.get("last_finished") else "not recorded")
    parts = [f"zl {said('zl_versions')}", f"compiler build {said('compiler_builds')}"
             + (f" ({said('compilers')})" if p.get("compilers") else ""),
             f"provider commit {said('provider_commits')}", f"driver {said('drivers')}",
             f"host {said('hosts')}", f"device {said('devices')}", f"cells ran {dates}"]
    return [Para(text="provenance (from the cells' run_identity.json): " + "; ".join(parts),
                 tone="muted")]
