"""The blocks a report document is made of: what every output format can draw.

:mod:`zl_report.layout` builds a :class:`Document` of these from a report model; the
renderers (text, Markdown, HTML, SVG plots) only draw them.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class Heading:
    text: str
    level: int = 2
    anchor: str = ""  # an id other blocks link to (HTML)


@attrs.frozen(kw_only=True)
class Para:
    text: str
    tone: str | None = None  # good | bad | warn | muted


@attrs.frozen(kw_only=True)
class Bullets:
    items: tuple[str, ...]
    tone: str | None = None


@attrs.frozen(kw_only=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str  # one of "l"/"r" per column
    tones: tuple[str | None, ...] = ()  # per row
    interactive: bool = False  # HTML: sortable columns and a filter box
    links: tuple[str, ...] = ()  # per row: anchor the first cell links to ("" = none)


@attrs.frozen(kw_only=True)
class PlotItem:
    label: str
    points: tuple[float, ...] = ()  # individual observations (per-round deltas)
    low: float | None = None  # interval drawn as a bar
    high: float | None = None
    mid: float | None = None  # the summary mark (the estimate the interval is built around)
    tone: str | None = None
    hollow: bool = False  # kept apart (fallback, mixed timer)


@attrs.frozen(kw_only=True)
class Plot:
    title: str
    items: tuple[PlotItem, ...]
    x_label: str = "delta % (positive = B faster)"
    threshold: float | None = None  # shaded +/- band


@attrs.frozen(kw_only=True)
class Cards:
    """Headline figures: (label, value, tone) each."""

    items: tuple[tuple[str, str, str | None], ...]


@attrs.frozen(kw_only=True)
class Details:
    """Folded preformatted text (a diff): a summary line, the lines on request."""

    summary: str
    lines: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Timeline:
    """Telemetry per device over campaign time, cells drawn as spans."""

    title: str
    devices: tuple[tuple[str, tuple[tuple[str, tuple[tuple[float, float], ...]], ...]], ...]
    cells: tuple[tuple[float, float, str], ...]  # start s, end s, label


Block = Heading | Para | Bullets | Table | Plot | Cards | Details | Timeline


@attrs.frozen(kw_only=True)
class Document:
    title: str
    blocks: tuple[Block, ...]


# --------------------------------------------------------------------------- formatting
