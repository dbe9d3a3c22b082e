"""Report sections shared by the screen and rounds documents: the overview, the IR
change of an operator, where the time went, the telemetry timeline, and the brief form for
pull requests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zl_core.foundation.verdicts import FASTER, INCONCLUSIVE, IR_CHANGED, MIXED, NO_CHANGE, SLOWER

from zl_report import occupancy
from zl_report.blocks import Block, Bullets, Cards, Details, Heading, Para, Plot, Table, Timeline
from zl_report.format import duration as _duration
from zl_report.format import pct, short_shape

#: Verdicts a pull-request reader needs to see (screen: the code changed; rounds: timing moved).
CHANGED = (IR_CHANGED, FASTER, SLOWER, MIXED, INCONCLUSIVE)


def overview(model: Mapping) -> list[Block]:
    """Verdict counts, controls' false-positive rate, device time, operators without a verdict."""
    s = model["summary"]
    cards: list[tuple[str, str, str | None]] = []
    if model["kind"] == "screen":
        counts = s.get("counts") or {}
        cards.append(("operators", str(len(model["rows"])), None))
        for verdict, n in counts.items():
            if n:
                cards.append((verdict, str(n), _tone(verdict)))
        raw_only = sum(1 for r in model["rows"] if (r.get("ir") or {}).get("raw_only"))
        if raw_only:
            cards.append(("names-only IR change", str(raw_only), "muted"))
    else:
        ops = [o for o in s.get("operators") or [] if not o.get("control")]
        cards.append(("operators", str(len(ops)), None))
        for verdict in (FASTER, SLOWER, MIXED, INCONCLUSIVE, NO_CHANGE):
            n = sum(1 for o in ops if o.get("verdict") == verdict)
            if n:
                cards.append((verdict, str(n), _tone(verdict)))
        c = s.get("controls")
        if c:
            rate = "-" if c.get("rate") is None else pct(c["rate"] * 100, signed=False, digits=1)
            cards.append(("controls' false positives", f"{c['called']}/{c['total']} ({rate})",
                          "warn" if c.get("called") else "good"))
        if s.get("no_report"):
            cards.append(("incomplete", str(len(s["no_report"])), "bad"))
        if s.get("skipped"):
            cards.append(("skipped", str(len(s["skipped"])), "muted"))
    device = s.get("device_time") or {}
    if device.get("total_s") is not None:
        cards.append(("device time", _duration(device["total_s"]), None))
    if device.get("s_per_decided_shape") is not None:
        cards.append(("device time per decided shape", _duration(device["s_per_decided_shape"]), None))
    if device.get("total_s") is None and s.get("timeline") and s["timeline"].get("cells"):
        # Only where the device time is unknown: two sums of one thing would disagree.
        cells = s["timeline"]["cells"]
        cards.append(("cell time", _duration(sum(c["end"] - c["start"] for c in cells)), None))
    checks = (s.get("time_spent") or {}).get("checks") or {}
    if checks.get("wall_s"):  # device time besides the rounds' (its phases: "Where the time went")
        cards.append(("accuracy checks", _duration(checks["wall_s"]), None))
    busy = occupancy.card(s.get("time_spent"))
    if busy is not None:
        cards.append(busy)
    return [Cards(items=tuple(cards))]


def _tone(verdict: str) -> str | None:
    from zl_report.format import VERDICT_TONES

    return VERDICT_TONES.get(verdict)


#: A kernel's autotune picks listed by name; the rest are counted.
PICKS_SHOWN = 8


def ir_blocks(ir: Mapping | None) -> list[Block]:
    """An operator's IR change: summary lines, per-kernel groups, the diff folded in. What
    every group of a kernel shares (its lines, its autotune picks) is said once, under the
    kernel's first group."""
    if not ir or ir.get("raw_equal"):
        return []
    blocks: list[Block] = [Heading(text="IR change", level=3)]
    blocks.append(Bullets(items=tuple(ir.get("lines") or [ir.get("headline", "")])))
    groups = [g for g in ir.get("groups") or [] if g["change"]["status"] != "names_only"]
    shared = {kernel: _shared([g for g in groups if g["kernel"] == kernel])
              for kernel in {g["kernel"] for g in groups}}
    said: set[str] = set()
    for g in groups:
        common, picks = shared[g["kernel"]]
        several = sum(1 for x in groups if x["kernel"] == g["kernel"]) > 1
        head = (f"{g['kernel']}: {len(g['files'])} of {g['of_variants']} variant(s); shapes "
                f"{', '.join(g['shapes'])}")
        items = [line for line in g["lines"] if not (several and line in common)]
        if g["kernel"] not in said:
            said.add(g["kernel"])
            if several and common:
                items = [*(f"{line} (every group of {g['kernel']})" for line in common), *items]
            items += [f"autotune pick {c}" for c in picks[:PICKS_SHOWN]]
            if len(picks) > PICKS_SHOWN:
                items.append(f"... and {len(picks) - PICKS_SHOWN} more autotune pick(s): "
                             "zl diff CAMPAIGN OP lists them")
        if g.get("launch"):
            items.append("compiled with " + "; ".join(g["launch"]))
        items.append("variants: " + ", ".join(g["variants"]))
        blocks.append(Para(text=head, tone="muted"))
        blocks.append(Bullets(items=tuple(items)))
        diff = g.get("diff")
        if diff:
            more = diff["total_lines"] - len(diff["lines"])
            lines = tuple(diff["lines"]) + ((f"... {more} more line(s): zl diff CAMPAIGN OP --full",)
                                            if more > 0 else ())
            blocks.append(Details(summary=f"canonical diff of {diff['file']} "
                                  f"({diff['total_lines']} lines)", lines=lines))
    return blocks


def _shared(groups: Sequence[Mapping]) -> tuple[list[str], list[str]]:
    """The lines every one of a kernel's groups has, and its autotune picks, each once."""
    common = [line for line in groups[0]["lines"] if all(line in g["lines"] for g in groups[1:])]
    picks: list[str] = []
    for g in groups:
        picks += [c for c in g.get("configs") or [] if c not in picks]
    return common, picks


def timeline_blocks(timeline: Mapping | None) -> list[Block]:
    if not timeline or not timeline.get("devices"):
        return []
    devices = tuple(
        (index, tuple((name, tuple((float(t), float(v)) for t, v in points))
                      for name, points in series.items() if points))
        for index, series in timeline["devices"].items())
    cells = tuple((float(c["start"]), float(c["end"]), _cell_label(c))
                  for c in timeline.get("cells") or [])
    return [Heading(text="Telemetry", level=2),
            Timeline(title="telemetry per device; shaded spans are cells (A darker, B lighter)",
                     devices=devices, cells=cells)]


#: Heading of the phase table; the brief form leaves it out with the telemetry.
TIME_HEADING = "Where the time went"


def time_blocks(spent: Mapping | None) -> list[Block]:
    """The campaign's cell time per phase, with the cells that could not separate each."""
    if not spent or not spent.get("wall_s"):
        return []
    seconds, share = spent.get("seconds") or {}, spent.get("share") or {}
    unknown = spent.get("unknown_cells") or {}
    sides = spent.get("by_side") or {}
    labels = spent.get("labels") or {}
    side_names = tuple(sorted(sides))
    checks = spent.get("checks") or {}
    in_checks = checks.get("seconds") or {}
    rows = []
    for name in seconds:
        label = labels.get(name, name)
        value = seconds.get(name)
        if not value and not unknown.get(name) and not in_checks.get(name):
            continue
        rows.append((label, _duration(value or 0.0),
                     "-" if share.get(name) is None else pct(share[name] * 100, signed=False, digits=1),
                     *(_duration((sides[side] or {}).get(name) or 0.0) for side in side_names),
                     *((_duration(in_checks.get(name) or 0.0),) if checks else ()),
                     str(unknown.get(name, 0)) if unknown.get(name) else ""))
    cells, without = spent.get("cells", 0), spent.get("cells_without_phases", 0)
    blocks: list[Block] = [
        Heading(text=TIME_HEADING, level=2),
        Para(text=f"{_duration(spent['wall_s'])} of cell time over {cells - without} cell(s)"
             + (f"; {without} cell(s) recorded no phases" if without else "")
             + _checks_said(checks)
             + "; a phase a cell could not separate is counted in its 'other'"),
        Table(headers=("phase", "time", "share", *(f"side {s}" for s in side_names),
                       *(("checks",) if checks else ()), "cells unknown"),
              rows=tuple(rows), align="lrr" + "r" * (len(side_names) + bool(checks)) + "r")]
    slowest = spent.get("slowest") or []
    if slowest:
        blocks.append(Bullets(items=tuple(
            f"{_cell_label(c)}: {_duration(c.get('wall_s') or 0.0)}, mostly "
            f"{labels.get(c.get('phase'), c.get('phase') or '?')}" for c in slowest)))
    return blocks + occupancy.blocks(spent)


def _checks_said(checks: Mapping) -> str:
    """The accuracy checks' own time, outside the rounds' sums and shares."""
    if not checks or not checks.get("wall_s"):
        return ""
    cells, without = checks.get("cells", 0), checks.get("cells_without_phases", 0)
    return (f"; the accuracy checks took {_duration(checks['wall_s'])} more over "
            f"{cells - without} cell(s) (column 'checks', not in the shares)")


#: Shapes listed one by one where judgements differ; the rest are counted.
JUDGED_SHAPES_SHOWN = 40


def judged_blocks(judged: Mapping | None) -> list[Block]:
    """Where the verdicts kept when the campaign finished differ from today's (or the
    rules did), both, and why."""
    if not judged or not judged.get("then"):
        return []
    then, now = judged["then"], judged["now"]
    ops, shapes = judged.get("changed_operators") or [], judged.get("changed_shapes") or []
    if not ops and not shapes and then.get("rules") == now.get("rules"):
        return []
    blocks: list[Block] = [Heading(text="Judged then and now", level=2),
                           Para(text=judged["text"], tone="warn" if ops or shapes else "muted")]
    rows = [(o["op"], "(operator)", str(o["then"] or "-"), str(o["now"] or "-")) for o in ops]
    rows += [(x["op"], short_shape(x["shape"]), str(x["then"] or "-"), str(x["now"] or "-"))
             for x in shapes[:JUDGED_SHAPES_SHOWN]]
    if rows:
        headers = ("operator", "shape", f"then (rules {then.get('rules')})",
                   f"now (rules {now.get('rules')})")
        blocks.append(Table(headers=headers, rows=tuple(rows), align="llll", stays=headers[2:]))
    if len(shapes) > JUDGED_SHAPES_SHOWN:
        blocks.append(Para(text=f"and {len(shapes) - JUDGED_SHAPES_SHOWN} more shape(s) "
                                "(summary.judged in zl report --json lists each)", tone="muted"))
    return blocks


#: What each class means, for the reader of the table.
CLASS_MEANING = ("G: correct, fewer layout conversions, faster in both run orders; C: correct, "
                 "fewer conversions, gain under the bar; B: correct, conversions not down (or the TTGIR "
                 "unchanged); R: "
                 "correct, a stable regression; K: wrong on the candidate only; X: nothing to claim "
                 "(failed, timed out, broken replay, or wrong on both sides)")
CLASS_TONES = {"G": "good", "C": None, "B": "muted", "R": "bad", "K": "bad", "X": "warn"}


def class_blocks(classes: Mapping | None) -> list[Block]:
    """The classes a sealed campaign was accounted into, with the rule that decided them."""
    if not classes:
        return []
    rule = classes.get("rule") or {}
    counts = classes.get("counts") or {}
    rows = classes.get("classes") or []
    return [Heading(text="Classes (sealed campaign)", level=2),
            Para(text=", ".join(f"{k} {counts[k]}" for k in "GCBRKX" if counts.get(k)) + "; rule: "
                 f"layout conversions of variants launched more than {rule.get('launch_floor')} times, "
                 f"G at {rule.get('gain_pct')}% and R at {rule.get('regression_pct')}% in both run orders"),
            Para(text=CLASS_MEANING, tone="muted"),
            Table(headers=("operator", "class", "tests A", "tests B", "why"),
                  rows=tuple((str(c["op"]), str(c["class"]), *tested(c.get("correctness")), str(c["why"]))
                             for c in rows),
                  align="lllll", tones=tuple(CLASS_TONES.get(c["class"]) for c in rows),
                  stays=("class", "tests A", "tests B"))]


def tested(correctness: Mapping | None) -> tuple[str, str]:
    """Each side's accuracy tests in a few words: "7 passed", "3 of 4 failed", "not run"."""
    out = []
    for side in ("A", "B"):
        found = (correctness or {}).get(side)
        if not found:
            out.append("not run")
        elif found.get("problem"):
            out.append("could not run")
        elif found.get("failed"):
            out.append(f"{found['failed']} of {found['passed'] + found['failed']} failed")
        else:
            out.append(f"{found['passed']} passed")
    return out[0], out[1]


def _cell_label(cell: Mapping) -> str:
    rnd = str(cell.get("round") or "0")
    return f"{cell['op']} r{rnd.zfill(2)}/{cell['side']}" if rnd != "0" else f"{cell['op']} {cell['side']}"


def briefed(blocks: Sequence[Block]) -> tuple[Block, ...]:
    """The pull-request form of the details: the sections of changed operators, no plots,
    no telemetry, no sections of unchanged operators or controls (every operator's verdict
    is in the answer above them)."""
    out: list[Block] = []
    keep = True
    for block in blocks:
        if isinstance(block, Heading) and block.level == 2:
            keep = not block.anchor or any(v in block.text for v in CHANGED)
            keep = keep and "(control)" not in block.text
            keep = keep and block.text not in ("Telemetry", TIME_HEADING)
        if not keep or isinstance(block, (Plot, Timeline)):
            continue
        out.append(block)
    return tuple(out)
