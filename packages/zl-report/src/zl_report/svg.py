"""Inline SVG plots: no scripts, no fonts, no external references.

Every plot is drawn at ``WIDTH`` user units, which is the width of the page's text
column on an 800 px screen: there it is drawn 1:1, so an 11 px label stays 11 px.
Wider screens show it at that size; narrower ones scale it down (``max-width:100%``).
"""

from __future__ import annotations

import math
from html import escape

from zl_report.blocks import Plot, Timeline

COLORS = {"good": "#2e7d32", "bad": "#c62828", "warn": "#e65100", "muted": "#757575",
          None: "#1565c0"}
WIDTH = 760
RIGHT_PAD = 16
ROW_H = 22
FONT = 11
# The label column takes what its longest label needs, within these bounds: at most
# 42% of the plot (about 46 characters), so the data keep 420 px.
MIN_LABEL_W = 60
MAX_LABEL_W = 320
LEGEND_ROW_H = 18
# Text widths, in ems of a sans-serif font, by kind of character. The page names no
# font, so these are estimates on the wide side (DejaVu Sans, the widest common default).
_NARROW, _WIDE = set("ijlft.,:;'|!()[] "), set("mwMW@%")


def text_width(text: str, size: float = FONT) -> float:
    """The width ``text`` takes at ``size`` px, estimated on the wide side."""
    em = sum(0.34 if c in _NARROW else 0.92 if c in _WIDE else 0.72 if c.isupper()
             else 0.64 for c in text)
    return em * size


def fit_label(label: str, width: float, size: float = FONT) -> str:
    """``label`` within ``width`` px; cut in the middle when it must be, so that labels
    that differ at the start (dtype) or the end (the last dims, ``#2``) stay apart."""
    if text_width(label, size) <= width:
        return label
    keep = len(label)
    while keep > 2 and text_width(label[:(keep + 1) // 2] + "\u2026" + label[len(label) - keep // 2:],
                                  size) > width:
        keep -= 1
    return label[:(keep + 1) // 2] + "\u2026" + label[len(label) - keep // 2:]


def _nice_step(span: float, ticks: float = 6.0) -> float:
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _domain(plot: Plot) -> tuple[float, float]:
    values = [0.0]
    for item in plot.items:
        values += [v for v in (*item.points, item.low, item.high, item.mid)
                   if v is not None and math.isfinite(v)]
    if plot.threshold:
        values += [-plot.threshold, plot.threshold]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    pad = (hi - lo) * 0.06
    return lo - pad, hi + pad


def _svg(width: float, height: float, title: str, body: list[str], *, kind: str) -> str:
    return (f'<svg class="plot {kind}" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(title)}">'
            + "".join(body) + "</svg>")


def _diamond(x: float, y: float, r: float, fill: str, stroke: str) -> str:
    return (f'd="M{x:.1f} {y - r:.1f} L{x + r:.1f} {y:.1f} L{x:.1f} {y + r:.1f} L{x - r:.1f} '
            f'{y:.1f} Z" fill="{fill}" stroke="{stroke}" stroke-width="1.5"')


def _swatch(kind: str, x: float, cy: float) -> str:
    """The legend's picture of one mark, 16 units wide from ``x``; in grey, as the colour
    of a mark is its verdict's."""
    grey = "#616161"
    if kind == "words":  # a note without a mark
        return ""
    if kind == "dot":
        return f'<circle cx="{x + 8:.0f}" cy="{cy:.0f}" r="2.5" fill="{grey}" fill-opacity="0.55"/>'
    if kind == "bar":
        return (f'<path d="M{x:.0f} {cy:.0f}h16" stroke="{grey}" stroke-width="3" '
                'stroke-opacity="0.45"/>')
    if kind in ("mid", "hollow"):
        return f'<path {_diamond(x + 8, cy, 5, grey if kind == "mid" else "#ffffff", grey)}/>'
    fill = {"band": "#e6e6e6", "A": CELL_FILL["A"], "B": CELL_FILL["B"]}[kind]
    return f'<rect x="{x:.0f}" y="{cy - 5:.0f}" width="16" height="10" fill="{fill}" stroke="#bbb"/>'


def _legend(entries: list[tuple[str, str]], top: float, left: float = 4) -> tuple[list[str], float]:
    """(kind of mark, words) entries in rows within WIDTH; the SVG and the height they take."""
    out, x, y = ['<g class="legend" font-size="10" fill="#444">'], left, top
    for kind, words in entries:
        indent = 0 if kind == "words" else 22
        need = indent + text_width(words, 10) + 14
        if x > left and x + need > WIDTH - RIGHT_PAD:
            x, y = left, y + LEGEND_ROW_H
        cy = y + LEGEND_ROW_H / 2
        out.append(_swatch(kind, x, cy) + f'<text x="{x + indent:.0f}" y="{cy + 3.5:.0f}">'
                   f"{escape(words)}</text>")
        x += need
    out.append("</g>")
    return out, y + LEGEND_ROW_H - top


def _forest_legend(plot: Plot) -> list[tuple[str, str]]:
    """Only the marks this plot draws."""
    items, entries = plot.items, []
    if plot.point_label and any(item.points for item in items):
        entries.append(("dot", plot.point_label))
    if any(item.low is not None and item.high is not None for item in items):
        entries.append(("bar", plot.bar_label))
    if any(item.mid is not None and not item.hollow for item in items):
        entries.append(("mid", plot.mid_label))
    if any(item.mid is not None and item.hollow for item in items):
        entries.append(("hollow", plot.hollow_label))
    if plot.threshold:
        entries.append(("band", f"\u00b1{plot.threshold:g}% threshold"))
    if plot.tone_label and any(item.tone for item in items):
        entries.append(("words", plot.tone_label))
    return entries


def forest(plot: Plot) -> str:
    """One row per item: observations as dots, the interval as a bar, its estimate as a
    diamond; a legend of the marks drawn above, the axis with its unit and direction below."""
    lo, hi = _domain(plot)
    legend, legend_h = _legend(_forest_legend(plot), 4)
    top = 4 + legend_h + 6
    widest = max((text_width(item.label) for item in plot.items), default=0.0)
    x0 = min(max(widest + 14, MIN_LABEL_W), MAX_LABEL_W)
    x1 = WIDTH - RIGHT_PAD
    bottom = top + ROW_H * max(1, len(plot.items))

    def x(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    out = [*legend]
    if plot.threshold:
        a, b = x(-plot.threshold), x(plot.threshold)
        out.append(f'<rect x="{a:.1f}" y="{top}" width="{b - a:.1f}" height="{bottom - top}" '
                   f'fill="#eeeeee"><title>\u00b1{plot.threshold:g}% threshold</title></rect>')
    step = _nice_step(hi - lo, max(3.0, (x1 - x0) / 80))
    for n in range(math.ceil(lo / step), math.floor(hi / step) + 1):
        tick = n * step
        tx = x(tick)
        out.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{bottom}" stroke="#f0f0f0"/>'
                   f'<line x1="{tx:.1f}" y1="{bottom}" x2="{tx:.1f}" y2="{bottom + 4}" stroke="#555"/>'
                   f'<text x="{tx:.1f}" y="{bottom + 15}" text-anchor="middle" font-size="{FONT}">'
                   f'{"0" if n == 0 else format(tick, "+g")}%</text>')
    zx = x(0.0)
    out.append(f'<line x1="{zx:.1f}" y1="{top}" x2="{zx:.1f}" y2="{bottom}" stroke="#333"/>'
               f'<line x1="{x0:.1f}" y1="{bottom}" x2="{x1}" y2="{bottom}" stroke="#555"/>')
    title, title_h = _axis_title(plot, x0, x1, bottom + 31)
    out += title
    height = bottom + 31 + title_h + 8
    for i, item in enumerate(plot.items):
        out += _row(item, top + i * ROW_H + ROW_H / 2, x0, x)
    return _svg(WIDTH, height, plot.title, out, kind="forest")


def _axis_title(plot: Plot, x0: float, x1: float, y: float) -> tuple[list[str], float]:
    """The direction at both ends of the axis and its title between them, or on a line
    of its own where the three would touch; the SVG and the height it adds below ``y``."""
    left, right = f"\u2190 {plot.negative_label}", f"{plot.positive_label} \u2192"
    ends = [f'<text class="axis" x="{x0:.1f}" y="{y}" font-size="{FONT}" fill="#444">{escape(left)}</text>',
            (f'<text class="axis" x="{x1:.1f}" y="{y}" text-anchor="end" font-size="{FONT}" fill="#444">'
             f'{escape(right)}</text>')]
    room = x1 - x0 - 2 * max(text_width(left), text_width(right)) - 24
    own_line = text_width(plot.x_label) > room
    title = (f'<text class="axis" x="{(x0 + x1) / 2:.1f}" y="{y + (14 if own_line else 0)}" '
             f'text-anchor="middle" font-size="{FONT}">{escape(plot.x_label)}</text>')
    return [*ends, title], (14.0 if own_line else 0.0)


def _row(item, cy: float, x0: float, x) -> list[str]:
    color = COLORS.get(item.tone, COLORS[None])
    label = fit_label(item.label, x0 - 14)
    whole = f"<title>{escape(item.label)}</title>" if label != item.label else ""  # on hover
    out = [(f'<text class="label" x="{x0 - 8:.1f}" y="{cy + 4:.1f}" text-anchor="end" '
            f'font-size="{FONT}">{whole}{escape(label)}</text>')]
    if item.low is not None and item.high is not None:
        out.append(f'<line x1="{x(item.low):.1f}" y1="{cy:.1f}" x2="{x(item.high):.1f}" '
                   f'y2="{cy:.1f}" stroke="{color}" stroke-width="3" stroke-opacity="0.45"/>')
    if item.points:  # one path of round-capped zero-length strokes: a dot each, few bytes
        dots = "".join(f"M{x(p):.1f} {cy:.1f}h0" for p in item.points)
        values = ", ".join(f"{p:+.2f}%" for p in item.points)
        out.append(f'<path d="{dots}" stroke="{color}" stroke-width="5" stroke-linecap="round" '
                   f'stroke-opacity="0.55"><title>{escape(item.label)}: {values}</title></path>')
    if item.mid is not None:
        fill = "#ffffff" if item.hollow else color
        out.append(f'<path {_diamond(x(item.mid), cy, 5, fill, color)}>'
                   f'<title>{escape(item.label)}: {item.mid:+.3f}%</title></path>')
    return out


# Telemetry series the backends name, as (what, unit, colour); others are drawn under their own name.
SERIES = {"sm_clock_mhz": ("SM clock", "MHz", "#1565c0"), "power_w": ("power", "W", "#e65100"),
          "temp_c": ("temperature", "\u00b0C", "#c62828"), "util_pct": ("utilisation", "%", "#2e7d32")}
CELL_FILL = {"A": "#dcdcdc", "B": "#f0f0f0"}
PANEL_H = 50
PANEL_GAP = 12
TIMELINE_LEFT = 120  # series names and their y ticks


def _ticks(lo: float, hi: float, count: float) -> tuple[float, float, list[float]]:
    """A domain widened to whole steps around ``lo``..``hi`` and its ticks."""
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    step = _nice_step(hi - lo, count)
    first, last = math.floor(lo / step), math.ceil(hi / step)
    return first * step, last * step, [n * step for n in range(first, last + 1)]


def timeline(plot: Timeline) -> str:
    """Per device, one small panel per series with its own y axis and unit, over campaign
    time in seconds; cells as shaded spans (side A darker than side B)."""
    ends = [t for _, series in plot.devices for _, pts in series for t, _ in pts]
    ends += [c[1] for c in plot.cells]
    x0, x1 = TIMELINE_LEFT, WIDTH - RIGHT_PAD
    span = max(ends or [1.0]) or 1.0
    x_ticks = [t for t in _ticks(0.0, span, max(3.0, (x1 - x0) / 90))[2] if t <= span]

    def x(t: float) -> float:
        return x0 + t / span * (x1 - x0)

    out, y = _legend([("A", "cell, side A"), ("B", "cell, side B")], 4, left=x0)
    y += 8
    for index, series in plot.devices:
        ordered = sorted(series, key=lambda s: (list(SERIES).index(s[0]) if s[0] in SERIES else 99, s[0]))
        block_h = len(ordered) * (PANEL_H + PANEL_GAP) - PANEL_GAP
        out.append(f'<text x="4" y="{y + 11}" font-size="{FONT}" font-weight="bold">'
                   f'device {escape(str(index))}</text>')
        y += 16
        for start, end, label in plot.cells:
            fill = CELL_FILL["A"] if label.endswith("A") else CELL_FILL["B"]
            out.append(f'<rect x="{x(start):.1f}" y="{y}" width="{max(x(end) - x(start), 0.5):.1f}" '
                       f'height="{block_h}" fill="{fill}"><title>{escape(label)}</title></rect>')
        for name, pts in ordered:
            out += _panel(name, pts, y, x)
            y += PANEL_H + PANEL_GAP
        y += -PANEL_GAP
        for tick in x_ticks:
            out.append(f'<line x1="{x(tick):.1f}" y1="{y}" x2="{x(tick):.1f}" y2="{y + 4}" stroke="#555"/>'
                       f'<text x="{x(tick):.1f}" y="{y + 15}" text-anchor="middle" font-size="{FONT}">'
                       f'{tick:g}</text>')
        out.append(f'<text x="{x1}" y="{y + 28}" text-anchor="end" font-size="{FONT}" fill="#444">'
                   'campaign time, s</text>')
        y += 40
    return _svg(WIDTH, y, plot.title, out, kind="timeline")


def _panel(name: str, pts, top: float, x) -> list[str]:
    """One series in a panel PANEL_H high: its name and unit, a y axis, the line."""
    what, unit, color = SERIES.get(name, (name, "", "#555"))
    values = [v for _, v in pts]
    lo, hi, ticks = _ticks(min(values), max(values), 3.0)

    def y(v: float) -> float:
        return top + PANEL_H - (v - lo) / (hi - lo) * PANEL_H

    x0, x1 = TIMELINE_LEFT, WIDTH - RIGHT_PAD
    out = [f'<text x="4" y="{top + 14}" font-size="{FONT}" fill="{color}">{escape(what)}</text>',
           f'<text x="4" y="{top + 27}" font-size="10" fill="#666">{escape(unit)}</text>',
           f'<rect x="{x0}" y="{top}" width="{x1 - x0}" height="{PANEL_H}" fill="none" stroke="#ccc"/>']
    for n, tick in enumerate(ticks):
        out.append(f'<line x1="{x0 - 3}" y1="{y(tick):.1f}" x2="{x1}" y2="{y(tick):.1f}" '
                   'stroke="#000" stroke-opacity="0.08"/>')
        if len(ticks) <= 3 or n in (0, len(ticks) - 1):  # more labels would touch
            # The end labels sit inside the panel, clear of the next panel's.
            shift = 0.0 if n == 0 else 8.0 if n == len(ticks) - 1 else 3.5
            out.append(f'<text x="{x0 - 5}" y="{y(tick) + shift:.1f}" text-anchor="end" font-size="10" '
                       f'fill="#444">{tick:g}</text>')
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(t):.1f} {y(v):.1f}" for i, (t, v) in enumerate(pts))
    out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.2">'
               f'<title>{escape(what)}: {min(values):g} .. {max(values):g} {escape(unit)}</title></path>')
    return out
