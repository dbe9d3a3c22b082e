"""Inline SVG plots: no scripts, no fonts, no external references."""

from __future__ import annotations

import math
from html import escape

from zl_report.layout import Plot

COLORS = {"good": "#2e7d32", "bad": "#c62828", "warn": "#e65100", "muted": "#757575",
          None: "#1565c0"}
WIDTH = 780
LABEL_W = 300
RIGHT_PAD = 24
ROW_H = 22
TOP = 12
AXIS_H = 42


def _nice_step(span: float) -> float:
    raw = span / 6.0
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


def forest(plot: Plot) -> str:
    """One row per item: observations as dots, the interval as a bar, the median as a diamond."""
    lo, hi = _domain(plot)
    x0, x1 = LABEL_W, WIDTH - RIGHT_PAD
    height = TOP + ROW_H * max(1, len(plot.items)) + AXIS_H

    def x(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    bottom = TOP + ROW_H * max(1, len(plot.items))
    opening = (f'<svg class="plot" width="{WIDTH}" height="{height}" '
               f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(plot.title)}">')
    out = [opening]
    if plot.threshold:
        a, b = x(-plot.threshold), x(plot.threshold)
        out.append(f'<rect x="{a:.1f}" y="{TOP}" width="{b - a:.1f}" height="{bottom - TOP}" '
                   f'fill="#eeeeee"><title>+/-{plot.threshold:g}% threshold</title></rect>')
    step = _nice_step(hi - lo)
    first = math.ceil(lo / step)
    for n in range(first, math.floor(hi / step) + 1):
        tick = n * step
        tx = x(tick)
        out.append(f'<line x1="{tx:.1f}" y1="{TOP}" x2="{tx:.1f}" y2="{bottom}" stroke="#f3f3f3"/>')
        out.append(f'<line x1="{tx:.1f}" y1="{bottom}" x2="{tx:.1f}" y2="{bottom + 4}" stroke="#555"/>')
        out.append(f'<text x="{tx:.1f}" y="{bottom + 16}" text-anchor="middle" '
                   f'font-size="11">{"0" if n == 0 else format(tick, "+g")}%</text>')
    zx = x(0.0)
    out.append(f'<line x1="{zx:.1f}" y1="{TOP}" x2="{zx:.1f}" y2="{bottom}" stroke="#333" '
               'stroke-width="1"/>')
    out.append(f'<line x1="{x0}" y1="{bottom}" x2="{x1}" y2="{bottom}" stroke="#555"/>')
    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{bottom + 34}" text-anchor="middle" '
               f'font-size="11">{escape(plot.x_label)}</text>')
    for i, item in enumerate(plot.items):
        cy = TOP + i * ROW_H + ROW_H / 2
        color = COLORS.get(item.tone, COLORS[None])
        label = item.label if len(item.label) <= 46 else item.label[:45] + "\u2026"
        out.append(f'<text x="{x0 - 8}" y="{cy + 4:.1f}" text-anchor="end" font-size="11">'
                   f'<title>{escape(item.label)}</title>{escape(label)}</text>')
        if item.low is not None and item.high is not None:
            out.append(f'<line x1="{x(item.low):.1f}" y1="{cy:.1f}" x2="{x(item.high):.1f}" '
                       f'y2="{cy:.1f}" stroke="{color}" stroke-width="3" stroke-opacity="0.45"/>')
        for p in item.points:
            out.append(f'<circle cx="{x(p):.1f}" cy="{cy:.1f}" r="2.5" fill="{color}" '
                       f'fill-opacity="0.55"/>')
        if item.mid is not None:
            mx = x(item.mid)
            fill = "#ffffff" if item.hollow else color
            out.append(f'<path d="M{mx:.1f} {cy - 5:.1f} L{mx + 5:.1f} {cy:.1f} L{mx:.1f} '
                       f'{cy + 5:.1f} L{mx - 5:.1f} {cy:.1f} Z" fill="{fill}" stroke="{color}" '
                       f'stroke-width="1.5"><title>{escape(item.label)}: {item.mid:+.3f}%</title></path>')
    out.append("</svg>")
    return "".join(out)
