"""Inline SVG plots: no scripts, no fonts, no external references."""

from __future__ import annotations

import math
from html import escape

from zl_report.blocks import Plot

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
    """One row per item: observations as dots, the interval as a bar, its estimate as a diamond."""
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
        if item.points:  # one path of round-capped zero-length strokes: a dot each, few bytes
            dots = "".join(f"M{x(p):.1f} {cy:.1f}h0" for p in item.points)
            out.append(f'<path d="{dots}" stroke="{color}" stroke-width="5" stroke-linecap="round" '
                       'stroke-opacity="0.55"/>')
        if item.mid is not None:
            mx = x(item.mid)
            fill = "#ffffff" if item.hollow else color
            out.append(f'<path d="M{mx:.1f} {cy - 5:.1f} L{mx + 5:.1f} {cy:.1f} L{mx:.1f} '
                       f'{cy + 5:.1f} L{mx - 5:.1f} {cy:.1f} Z" fill="{fill}" stroke="{color}" '
                       f'stroke-width="1.5"><title>{escape(item.label)}: {item.mid:+.3f}%</title></path>')
    out.append("</svg>")
    return "".join(out)


SERIES_COLORS = {"sm_clock_mhz": "#1565c0", "power_w": "#e65100", "temp_c": "#c62828",
                 "util_pct": "#2e7d32"}
PANEL_H = 120


def timeline(plot) -> str:
    """Per device a panel over campaign time: each series on its own min-max scale (the
    legend gives the range), cells as shaded spans (side A darker than side B)."""
    ends = [t for _, series in plot.devices for _, pts in series for t, _ in pts]
    ends += [c[1] for c in plot.cells]
    span = max(ends or [1.0]) or 1.0
    x0, x1 = 60, WIDTH - RIGHT_PAD
    height = TOP + len(plot.devices) * (PANEL_H + 34) + 20
    opening = (f'<svg class="plot" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} '
               f'{height}" role="img" aria-label="{escape(plot.title)}">')
    out = [opening]

    def x(t: float) -> float:
        return x0 + t / span * (x1 - x0)

    for n, (index, series) in enumerate(plot.devices):
        top = TOP + n * (PANEL_H + 34)
        out.append(f'<text x="4" y="{top + 12}" font-size="11">dev {escape(str(index))}</text>')
        for start, end, label in plot.cells:
            fill = "#e3e3e3" if label.endswith("A") else "#f3f3f3"
            out.append(f'<rect x="{x(start):.1f}" y="{top}" width="{max(x(end) - x(start), 0.5):.1f}" '
                       f'height="{PANEL_H}" fill="{fill}" stroke="#fff" stroke-width="0.5">'
                       f'<title>{escape(label)}</title></rect>')
        legend = []
        for name, pts in series:
            values = [v for _, v in pts]
            lo, hi = min(values), max(values)
            scale = (hi - lo) or 1.0
            path = " ".join(f"{'M' if i == 0 else 'L'}{x(t):.1f} {top + PANEL_H - 4 - (v - lo) / scale * (PANEL_H - 8):.1f}"
                            for i, (t, v) in enumerate(pts))
            color = SERIES_COLORS.get(name, "#555")
            out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.2"/>')
            legend.append((name, lo, hi, color))
        lx = x0
        for name, lo, hi, color in legend:
            text = f"{name} {lo:g}-{hi:g}"
            out.append(f'<text x="{lx:.0f}" y="{top + PANEL_H + 14}" font-size="10" fill="{color}">'
                       f'{escape(text)}</text>')
            lx += 7 * len(text) + 14
        out.append(f'<text x="{x1}" y="{top + PANEL_H + 26}" font-size="10" text-anchor="end">'
                   f'{span:.0f} s</text>')
    out.append("</svg>")
    return "".join(out)
