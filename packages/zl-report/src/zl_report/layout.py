"""From a report model to a document of blocks every output format can draw.

The model (``zl_core.report``) says what was found; this module decides what a
reader sees and in which order. The renderers (text, Markdown, HTML) only draw
blocks, so the three forms can never disagree about content.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from zl_report.blocks import (
    Block,
    Bullets,
    Document,
    Heading,
    Para,
    Plot,
    PlotItem,
    Table,
)
from zl_report.format import (  # re-exported: readers of a report find them here too
    FOLD_ABOVE,
    SIGN_NOTE,
    UNCHANGED,
    VERDICT_TONES,
    _finite,
    anchor,
    interval_estimate,
    median_ms,
    ms,
    pct,
    shape_verdict,
    short_shape,
    span,
    speedup,
    undecided_reason,  # noqa: F401 - used by readers of a report (tests/test_report_real_campaigns.py)
    undecided_summary,
)
from zl_report.sections import (
    briefed,
    class_blocks,
    ir_blocks,
    ir_cell,
    judged_blocks,
    overview,
    time_blocks,
    timeline_blocks,
)

# --------------------------------------------------------------------------- shared sections


def _caliber_blocks(model: Mapping) -> list[Block]:
    cal = model.get("caliber") or {}
    common = cal.get("common") or {}
    shown = " ".join(f"{k}={v}" for k, v in common.items() if v not in (None, ""))
    blocks: list[Block] = [Para(text=f"caliber: {shown or '(no identities)'}", tone="muted")]
    differs = [f for f in cal.get("differs") or [] if f != "autotune_mode"]
    if differs:
        blocks.append(Para(text="caliber fields that differ between cells: " + ", ".join(differs),
                           tone="warn"))
    if model.get("caliber_problems"):
        blocks.append(Para(text="Measured under different conditions; shown only because "
                           "--allow-caliber-mismatch was given:", tone="bad"))
        blocks.append(Bullets(items=tuple(model["caliber_problems"]), tone="bad"))
    if model.get("caliber_warnings"):
        blocks.append(Bullets(items=tuple(f"warning: {w}" for w in model["caliber_warnings"]),
                              tone="warn"))
    return blocks


def _switch_line(summary: Mapping) -> str | None:
    switch = summary.get("switch")
    if not switch:
        return None
    a, b = summary.get("a_value"), summary.get("b_value")
    if a is None and b is None:
        return f"switch {switch}"
    return f"switch {switch}: A={a} B={b}"


def _notes(model: Mapping) -> list[Block]:
    notes = model.get("notes") or []
    return [Heading(text="Notes", level=2), Bullets(items=tuple(notes))] if notes else []


# --------------------------------------------------------------------------- pair


def _pair(model: Mapping) -> list[Block]:
    s = model["summary"]
    blocks: list[Block] = [
        Para(text=f"A: {s['a']} ({s['sources']['A'] or 'no rows'}, {s['rows_a']} rows)"),
        Para(text=f"B: {s['b']} ({s['sources']['B'] or 'no rows'}, {s['rows_b']} rows)"),
        Para(text=SIGN_NOTE, tone="muted"),
        *_caliber_blocks(model),
    ]
    rows, tones, items = [], [], []
    for r in model["rows"]:
        timer = r["a_timer"] if r["a_timer"] == r["b_timer"] else f"{r['a_timer']}/{r['b_timer']}"
        mark = "fallback" if (r["a_fallback"] or r["b_fallback"]) else ""
        rows.append((short_shape(r["shape"]), ms(r["a_latency_ms"]), ms(r["b_latency_ms"]),
                     speedup(r["delta_pct"]), pct(r["delta_pct"]),
                     str(timer or "?"), mark, r["class"] if r["class"] == "ok" else r["reason"]))
        tones.append(None if r["class"] == "ok" else "muted")
        if r["delta_pct"] is not None:
            items.append(PlotItem(label=short_shape(r["shape"]), points=(r["delta_pct"],), mid=r["delta_pct"],
                                  hollow=r["class"] != "ok"))
    blocks.append(Table(headers=("shape", "A ms", "B ms", "speedup", "delta", "timer", "fallback", "pairing"),
                        rows=tuple(rows), align="lrrrrlll", tones=tuple(tones)))
    c, f = s["comparable"], s["fallback"]
    if c["n"]:
        blocks.append(Para(text=f"{c['n']} comparable rows (same timer, no fallback): median "
                           f"{pct(c['median_pct'])}, range {span(c['min_pct'], c['max_pct'])}; "
                           f"{s['beyond_threshold']['b_faster']} beyond +{s['threshold_pct']:g}%, "
                           f"{s['beyond_threshold']['b_slower']} beyond -{s['threshold_pct']:g}%."))
    else:
        blocks.append(Para(text="no comparable rows (same timer, no fallback, SUCCESS on both sides)",
                           tone="warn"))
    if f["n"]:
        blocks.append(Para(text=f"{f['n']} rows fell back to direct timing on both sides, kept apart: "
                           f"median {pct(f['median_pct'])}, range {span(f['min_pct'], f['max_pct'])}.",
                           tone="warn"))
    counts = {k: v for k, v in s["counts"].items() if v and k != "ok"}
    if counts:
        blocks.append(Para(text="not pooled: " + ", ".join(f"{v} {k}" for k, v in counts.items()),
                           tone="muted"))
    if items:  # one observation per shape: its dot is its diamond
        blocks.append(Plot(title="per-shape delta (hollow: kept apart)", items=tuple(items),
                           threshold=s.get("threshold_pct"), point_label="",
                           mid_label="delta of the shape",
                           hollow_label="kept apart (fallback or mixed timer)"))
    return blocks


# --------------------------------------------------------------------------- rounds


def _rounds(model: Mapping) -> list[Block]:
    s = model["summary"]
    head = [x for x in (_switch_line(s),
                        f"rounds: {s.get('rounds')}", f"threshold: +/-{s['threshold_pct']:g}%") if x]
    blocks: list[Block] = [*overview(model), Para(text="; ".join(head)),
                           Para(text=SIGN_NOTE, tone="muted"), *_caliber_blocks(model)]
    undecided = undecided_summary(model)
    if undecided:
        blocks.append(Para(text=undecided, tone="warn"))
    blocks += judged_blocks(s.get("judged"))
    blocks += class_blocks(s.get("classes"))
    ops = s.get("operators") or []
    if ops:
        blocks.append(Table(
            headers=("operator", "verdict", "median of medians", "per-round medians",
                     "side noise", "within cell", "sign-changed", "shapes", "timer", "IR"),
            rows=tuple((o["op"] + (" (control)" if o["control"] else ""), o["verdict"],
                        pct((o.get("operator") or {}).get("median_of_medians_pct")),
                        _range((o.get("operator") or {}).get("range_of_round_medians")),
                        pct(o.get("median_side_noise_pct"), signed=False),
                        pct(o.get("median_within_cell_pct"), signed=False),
                        str(o.get("sign_changed_shapes")),
                        f"{o['counted_shapes']}/{o['n_shapes']}", _timer(o.get("timer")),
                        ir_cell(o.get("ir")))
                       for o in ops),
            align="llrrrrrrll", tones=tuple(VERDICT_TONES.get(o["verdict"]) for o in ops),
            interactive=True, links=tuple(anchor(o["op"]) for o in ops)))
    for op in ops:
        blocks += _rounds_op(model, op, many=len(ops) > FOLD_ABOVE)
    if s.get("no_report"):
        blocks.append(Heading(text="No report", level=2))
        blocks.append(Bullets(items=tuple(f"{x['op']}: {x['reason']}" for x in s["no_report"]),
                              tone="bad"))
    if s.get("skipped"):
        blocks.append(Heading(text="Skipped", level=2))
        blocks.append(Bullets(items=tuple(f"{x['op']}: {x['reason']}" for x in s["skipped"])))
    if s.get("controls"):
        c = s["controls"]
        blocks.append(Heading(text="Controls (A/A)", level=2))
        blocks.append(Para(text=c["text"] + (f" ({pct(c['rate'] * 100, signed=False, digits=1)})"
                                             if c.get("rate") is not None else ""),
                           tone="warn" if c.get("called") else None))
    blocks += _drift(s.get("drift") or {})
    blocks += time_blocks(s.get("time_spent"))
    blocks += timeline_blocks(s.get("timeline"))
    return blocks


def _range(value: Sequence[float] | None) -> str:
    if not value:
        return "-"
    lo, hi = value
    return span(lo, hi)


def _timer(value: object) -> str:
    if isinstance(value, list):
        return "/".join(value)
    return str(value or "-")


def _rounds_op(model: Mapping, op: Mapping, *, many: bool = False) -> list[Block]:
    name = op["op"]
    blocks: list[Block] = [
        Heading(text=f"{name}{' (control)' if op['control'] else ''}: {op['verdict']}", level=2,
                anchor=anchor(name), fold=many and op["verdict"] in UNCHANGED),
        Para(text=op["text"], tone=VERDICT_TONES.get(op["verdict"])),
    ]
    detail = (f"{op['rounds']} rounds; median side noise "
              f"{pct(op.get('median_side_noise_pct'), signed=False)} across processes, "
              f"{pct(op.get('median_within_cell_pct'), signed=False)} within a cell; "
              f"{op.get('sign_changed_shapes')} sign-changed shape(s)")
    if op.get("fallback_shapes"):
        detail += f"; {op['fallback_shapes']} shape(s) fell back to direct timing (kept apart)"
    if op.get("incomplete_shapes"):
        detail += f"; {op['incomplete_shapes']} shape(s) without a usable pair in every round"
    blocks.append(Para(text=detail))
    if op.get("drift_check"):
        dc = op["drift_check"]
        text = (f"drift-flagged rounds {', '.join(op['flagged_rounds'])}: verdict without them "
                f"{dc['without_flagged'] or '-'}" + (f" ({dc['why']})" if dc.get("why") else ""))
        blocks.append(Para(text=text, tone="warn" if dc["depends"] else "muted"))
    rows, tones, items = [], [], []
    for r in (x for x in model["rows"] if x["op"] == name):
        st = r.get("stats") or {}
        rows.append((short_shape(r["shape"]), r["segment"], str(r.get("timer") or "-"),
                     median_ms(r.get("a_ms")), median_ms(r.get("b_ms")),
                     speedup(interval_estimate(st)), pct(interval_estimate(st)),
                     span(st.get("ci_low_pct"), st.get("ci_high_pct")),
                     span(st.get("min_delta_pct"), st.get("max_delta_pct")),
                     f"{st['sign_agree']}/{st['n']}" if st else "-",
                     (f"{pct(st.get('a_spread_pct'), signed=False)} / "
                      f"{pct(st.get('b_spread_pct'), signed=False)}") if st else "-",
                     (f"{pct(r.get('a_within_pct'), signed=False)} / "
                      f"{pct(r.get('b_within_pct'), signed=False)}"),
                     shape_verdict(r, model["summary"].get("threshold_pct"))))
        tones.append(VERDICT_TONES.get(r.get("verdict")) if r["segment"] == "main" else "muted")
        if st:
            items.append(PlotItem(label=short_shape(r["shape"]), points=_finite(st.get("deltas_pct") or ()),
                                  low=st.get("ci_low_pct"), high=st.get("ci_high_pct"),
                                  mid=interval_estimate(st),
                                  tone=VERDICT_TONES.get(r.get("verdict")),
                                  hollow=r["segment"] != "main"))
    if rows:
        blocks.append(Table(headers=("shape", "segment", "timer", "A ms", "B ms", "speedup",
                                     "estimate", "CI", "per-round range", "sign agree",
                                     "spread A / B", "within cell A / B", "verdict"),
                            rows=tuple(rows), align="lllrrrrrrrrrl", tones=tuple(tones)))
    if items:
        threshold = model["summary"].get("threshold_pct")
        blocks.append(Plot(title=f"{name}: per-round deltas and the interval per shape",
                           items=tuple(items), threshold=threshold))
    blocks += _ir(op.get("ir"), many=many)
    if op.get("notes"):
        blocks.append(Bullets(items=tuple(op["notes"]), tone="muted"))
    return blocks


def _drift(d: Mapping) -> list[Block]:
    if not d or not (d.get("telemetry") or d.get("flagged_cells")):
        return []
    blocks: list[Block] = [Heading(text="Drift", level=2)]
    if not d.get("flagged_cells"):
        blocks.append(Para(text="telemetry: no cell flagged for clock, temperature or power drift"))
    else:
        blocks.append(Bullets(items=tuple(f"{c['label']}: {', '.join(c['flags'])}"
                                          for c in d["flagged_cells"]), tone="warn"))
        dep = [f"{x['op']}: {x['verdict']} -> {x['without_flagged'] or '-'} without flagged rounds"
               for x in d.get("dependent_operators") or []]
        dep += [f"{x['op']} {short_shape(x['shape'])}: {x['verdict']} -> {x['without_flagged'] or '-'}"
                + (f" ({x['why']})" if x.get("why") else "")
                for x in d.get("dependent_shapes") or []]
        if dep:
            blocks.append(Para(text="verdicts that depend on flagged cells:", tone="bad"))
            blocks.append(Bullets(items=tuple(dep), tone="bad"))
        else:
            blocks.append(Para(text="no verdict depends on the flagged cells"))
    if d.get("unjudged_cells"):
        blocks.append(Para(text=f"{len(d['unjudged_cells'])} cell(s) had no busy telemetry "
                           "samples to judge", tone="muted"))
    blocks.append(Para(text=f"rule: {d.get('rule', '')}", tone="muted"))
    return blocks


# --------------------------------------------------------------------------- screen


def _screen(model: Mapping) -> list[Block]:
    s = model["summary"]
    head = [x for x in (_switch_line(s),
                        f"IR-only (compile_only, target {s.get('target')})" if s.get("compile_only")
                        else None) if x]
    blocks: list[Block] = [*overview(model)]
    if head:
        blocks.append(Para(text="; ".join(head)))
    if not s.get("compile_only"):
        blocks.append(Para(text=SIGN_NOTE, tone="muted"))
    blocks += _caliber_blocks(model)
    rows, tones, items = [], [], []
    for r in model["rows"]:
        d = r.get("delta")
        cells = [r["op"], r["verdict"], _ab(r, "kernels"), _converts(r)]
        if not s.get("compile_only"):
            cells.insert(2, _ab(r, "rows"))
            cells.append(f"{d['label']}: {span(d['min_pct'], d['max_pct'])}" if d else "")
        cells.append(ir_cell(r.get("ir")))
        cells.append(str(r.get("notes") or ""))
        rows.append(tuple(cells))
        tones.append(VERDICT_TONES.get(r["verdict"]))
        if d:
            items.append(PlotItem(label=f"{r['op']} ({d['label']})", low=d["min_pct"],
                                  high=d["max_pct"], mid=d["median_pct"],
                                  tone=VERDICT_TONES.get(r["verdict"])))
    headers: tuple[str, ...]
    if s.get("compile_only"):
        headers = ("operator", "verdict", "kernels A/B", "converts A/B", "IR", "notes")
        align = "llllll"
    else:
        headers = ("operator", "verdict", "rows A/B", "kernels A/B", "converts A/B",
                   "delta range", "IR", "notes")
        align = "llllllll"
    blocks.append(Table(headers=headers, rows=tuple(rows), align=align, tones=tuple(tones),
                        interactive=True,
                        links=tuple(anchor(r["op"]) if _ir_lines(r) else "" for r in model["rows"])))
    counts = ", ".join(f"{v} {k}" for k, v in s["counts"].items() if v)
    blocks.append(Para(text=f"verdicts: {counts or 'none'}"))
    if s.get("ir_changed") and s.get("compile_only"):
        # An IR-only screen cannot feed A/B rounds (zl ab refuses it): they need timed cells.
        blocks.append(Para(text="next: the IR of " + " ".join(s["ir_changed"]) + " changed for "
                           + f"{s.get('target') or 'the target'}; to time it, screen them on a device "
                           "(zl screen without --compile-only), then zl ab takes that screen"))
    elif s.get("ir_changed"):
        blocks.append(Para(text="next: A/B rounds for " + " ".join(s["ir_changed"])
                           + " (zl ab takes the IR_CHANGED operators of this screen)"))
    if items:
        blocks.append(Plot(title="delta range of the screen pair per operator", items=tuple(items),
                           bar_label="range of the per-shape deltas", mid_label="median",
                           tone_label="colour: the operator's verdict"))
    many = len(model["rows"]) > FOLD_ABOVE
    for r in model["rows"]:
        if _ir_lines(r):
            blocks.append(Heading(text=f"{r['op']}: {r['verdict']}", level=2, anchor=anchor(r["op"]),
                                  fold=many and r["verdict"] in UNCHANGED))
            blocks += _ir(r["ir"], many=many)
    blocks += time_blocks(s.get("time_spent"))
    blocks += timeline_blocks(s.get("timeline"))
    return blocks


def _ir(ir: Mapping | None, *, many: bool) -> list[Block]:
    """An operator's IR change; in a large campaign folded under its first line (HTML),
    so that a page of many changed operators is a list a reader can open items of."""
    blocks = ir_blocks(ir)
    if many and blocks and isinstance(blocks[0], Heading):
        blocks[0] = attrs.evolve(blocks[0], fold=True)
    return blocks


def _ir_lines(row: Mapping) -> list[str]:
    return list((row.get("ir") or {}).get("lines") or [])


def _ab(row: Mapping, stem: str) -> str:
    return f"{row.get(stem + '_a', '-')}/{row.get(stem + '_b', '-')}"


def _converts(row: Mapping) -> str:
    """Converts of the measured variants, and of every variant where that differs."""
    scoped = _ab(row, "convert_layouts")
    if row.get("convert_layouts_all_a") in (None, "") or _ab(row, "convert_layouts_all") == scoped:
        return scoped
    return f"{scoped} (all {_ab(row, 'convert_layouts_all')})"


# --------------------------------------------------------------------------- entry


def document(model: Mapping, *, brief: bool = False) -> Document:
    """The document of a report; ``brief`` (pull requests) keeps the overview and the
    operators whose code or timing changed, without plots."""
    kind = model.get("kind")
    builders = {"pair": _pair, "rounds": _rounds, "screen": _screen}
    build = builders.get(kind) if isinstance(kind, str) else None
    if build is None:
        raise ValueError(f"unknown report kind {kind!r}; expected pair, rounds or screen")
    blocks = tuple(build(model)) + tuple(_notes(model))
    return Document(title=str(model.get("title") or kind),
                    blocks=briefed(blocks) if brief else blocks)
