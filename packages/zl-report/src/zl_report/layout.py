"""From a report model to a document of blocks every output format can draw.

The model (``zl_core.report``) says what was found; this module decides what a
reader sees and in which order. The renderers (text, Markdown, HTML) only draw
blocks, so the three forms can never disagree about content.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from zl_report import retuned
from zl_report.answer import (
    ordered_operators,
    ordered_rows,
    pair_answer,
    provenance_blocks,
    rounds_answer,
    screen_answer,
)
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
    RATIO_NOTE,
    SIGN_NOTE,
    UNCHANGED,
    VERDICT_TONES,
    _finite,
    anchor,
    interval_estimate,
    latency,
    median_latency,
    pct,
    ratio,
    shape_verdict,
    shape_why,
    short_shape,
    span,
    undecided_reason,  # noqa: F401 - used by readers of a report (tests/test_report_real_campaigns.py)
    undecided_summary,
)
from zl_report.sections import (
    briefed,
    class_blocks,
    ir_blocks,
    judged_blocks,
    time_blocks,
    timeline_blocks,
)

#: The "next:" line of a screen names its changed operators up to this many, else counts them.
NEXT_NAMED = 20

# --------------------------------------------------------------------------- shared sections


def _caliber_blocks(model: Mapping) -> list[Block]:
    cal = model.get("caliber") or {}
    common = cal.get("common") or {}
    shown = " ".join(f"{k}={v}" for k, v in common.items() if v not in (None, ""))
    blocks: list[Block] = [Para(text=f"caliber: {shown or '(no identities)'}", tone="muted"),
                           *provenance_blocks(model.get("summary") or {})]
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
        Para(text=f"{SIGN_NOTE}; {RATIO_NOTE}", tone="muted"),
        *_caliber_blocks(model),
    ]
    rows, tones, items = [], [], []
    for r in model["rows"]:
        timer = r["a_timer"] if r["a_timer"] == r["b_timer"] else f"{r['a_timer']}/{r['b_timer']}"
        mark = "fallback" if (r["a_fallback"] or r["b_fallback"]) else ""
        rows.append((short_shape(r["shape"]), latency(r["a_latency_ms"]), latency(r["b_latency_ms"]),
                     ratio(r["delta_pct"]), pct(r["delta_pct"]),
                     str(timer or "?"), mark, r["class"] if r["class"] == "ok" else r["reason"]))
        tones.append(None if r["class"] == "ok" else "muted")
        if r["delta_pct"] is not None:
            items.append(PlotItem(label=short_shape(r["shape"]), points=(r["delta_pct"],), mid=r["delta_pct"],
                                  hollow=r["class"] != "ok"))
    blocks.append(Table(headers=("shape", "A", "B", "B vs A", "delta", "timer", "fallback", "pairing"),
                        rows=tuple(rows), align="lrrrrlll", tones=tuple(tones)))
    f = s["fallback"]  # the comparable rows' median is the answer (zl_report.answer)
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


def _rounds(model: Mapping, *, brief: bool = False) -> list[Block]:
    """The details under the answer: conditions, judgements, each operator's section in
    the answer's order, failures, controls, drift and where the time went."""
    s = model["summary"]
    head = [x for x in (_switch_line(s),
                        f"rounds: {s.get('rounds')}", f"threshold: +/-{s['threshold_pct']:g}%") if x]
    blocks: list[Block] = [Para(text="; ".join(head)),
                           Para(text=f"{SIGN_NOTE}; {RATIO_NOTE}", tone="muted"), *_caliber_blocks(model)]
    undecided = undecided_summary(model)
    if undecided:
        blocks.append(Para(text=undecided, tone="warn"))
    blocks += judged_blocks(s.get("judged"))
    blocks += class_blocks(s.get("classes"))
    blocks += retuned.campaign_blocks(s)
    ops = ordered_operators(s.get("operators") or [])
    for op in ops:
        blocks += _rounds_op(model, op, many=len(ops) > FOLD_ABOVE, brief=brief)
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


def _rounds_op(model: Mapping, op: Mapping, *, many: bool = False, brief: bool = False) -> list[Block]:
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
    threshold = model["summary"].get("threshold_pct")
    for r in (x for x in model["rows"] if x["op"] == name):
        st = r.get("stats") or {}
        est = interval_estimate(st)
        cells = [short_shape(r["shape"]), shape_verdict(r), pct(est),
                 span(st.get("ci_low_pct"), st.get("ci_high_pct")),
                 median_latency(r.get("a_ms")), median_latency(r.get("b_ms")), ratio(est),
                 r["segment"], str(r.get("timer") or "-")]
        if not brief:
            cells += [span(st.get("min_delta_pct"), st.get("max_delta_pct")),
                      f"{st['sign_agree']}/{st['n']}" if st else "-",
                      (f"{pct(st.get('a_spread_pct'), signed=False)} / "
                       f"{pct(st.get('b_spread_pct'), signed=False)}") if st else "-",
                      (f"{pct(r.get('a_within_pct'), signed=False)} / "
                       f"{pct(r.get('b_within_pct'), signed=False)}")]
        rows.append((*cells, shape_why(r, threshold)))
        tones.append(VERDICT_TONES.get(r.get("verdict")) if r["segment"] == "main" else "muted")
        if st:
            items.append(PlotItem(label=short_shape(r["shape"]), points=_finite(st.get("deltas_pct") or ()),
                                  low=st.get("ci_low_pct"), high=st.get("ci_high_pct"),
                                  mid=est, tone=VERDICT_TONES.get(r.get("verdict")),
                                  hollow=r["segment"] != "main"))
    if rows:
        headers = ("shape", "verdict", "estimate", "CI", "A", "B", "B vs A", "segment", "timer",
                   *(() if brief else ("per-round range", "sign agree", "spread A / B",
                                       "within cell A / B")), "why undecided")
        align = "ll" + "r" * 5 + "ll" + ("" if brief else "r" * 4) + "l"
        if not any(row[-1] for row in rows):  # no undecided shape: no column for the reason
            headers, rows, align = headers[:-1], [row[:-1] for row in rows], align[:-1]
        blocks.append(Table(headers=headers, rows=tuple(rows), align=align, tones=tuple(tones),
                            fold=f"{len(rows)} shape(s): verdicts, estimates, latencies"))
    if items:
        blocks.append(Plot(title=f"{name}: per-round deltas and the interval per shape",
                           items=tuple(items), threshold=threshold))
    blocks += retuned.operator_blocks(model, op)
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
    blocks: list[Block] = []
    if head:
        blocks.append(Para(text="; ".join(head)))
    if not s.get("compile_only"):
        blocks.append(Para(text=SIGN_NOTE, tone="muted"))
    blocks += _caliber_blocks(model)
    items = []
    for r in model["rows"]:
        d = r.get("delta")
        if d:
            items.append(PlotItem(label=f"{r['op']} ({d['label']})", low=d["min_pct"],
                                  high=d["max_pct"], mid=d["median_pct"],
                                  tone=VERDICT_TONES.get(r["verdict"])))
    if s.get("ir_changed") and s.get("compile_only"):
        # An IR-only screen cannot feed A/B rounds (zl ab refuses it): they need timed cells.
        blocks.append(Para(text="next: the IR of " + " ".join(s["ir_changed"]) + " changed for "
                           + f"{s.get('target') or 'the target'}; to time it, screen them on a device "
                           "(zl screen without --compile-only), then zl ab takes that screen"))
    elif s.get("ir_changed"):
        changed = s["ir_changed"]
        named = " ".join(changed) if len(changed) <= NEXT_NAMED else f"the {len(changed)} IR_CHANGED operators"
        blocks.append(Para(text=f"next: A/B rounds for {named} (zl ab takes the IR_CHANGED operators "
                           "of this screen)"))
    if items:
        blocks.append(Plot(title="delta range of the screen pair per operator", items=tuple(items),
                           bar_label="range of the per-shape deltas", mid_label="median",
                           tone_label="colour: the operator's verdict"))
    many = len(model["rows"]) > FOLD_ABOVE
    for r in ordered_rows(model["rows"]):
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


# --------------------------------------------------------------------------- entry


def document(model: Mapping, *, brief: bool = False) -> Document:
    """The document of a report: its answer (every operator's verdict) and the details;
    ``brief`` (pull requests) keeps the operators whose code or timing changed, without
    plots, and a narrower per-shape table."""
    kind = model.get("kind")
    if kind == "pair":
        answer, details = pair_answer(model), _pair(model)
    elif kind == "rounds":
        answer, details = rounds_answer(model, brief=brief), _rounds(model, brief=brief)
    elif kind == "screen":
        answer, details = screen_answer(model, brief=brief), _screen(model)
    elif kind == "compare":
        from zl_report import compare

        answer, details = compare.answer(model), compare.details(model, brief=brief)
    else:
        raise ValueError(f"unknown report kind {kind!r}; expected pair, rounds, screen or compare")
    blocks = tuple(details) + tuple(_notes(model))
    return Document(title=str(model.get("title") or kind), answer=tuple(answer),
                    blocks=briefed(blocks) if brief else blocks)
