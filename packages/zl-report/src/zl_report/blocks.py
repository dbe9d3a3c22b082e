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
    # HTML: the section this heading opens (up to the next heading of its level) is
    # folded (collapsed), after the sections left open; the other forms ignore it.
    fold: bool = False


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
    #: Columns a row's conclusion is in: kept in every row even when every row has the
    #: same value (other such columns are said once above the table).
    stays: tuple[str, ...] = ("verdict",)
    #: Markdown: the table folded into ``<details>`` under this line ("" = open); a detail
    #: a pull-request reader opens on demand.
    fold: str = ""


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
    x_label: str = "delta, % = (A/B \u2212 1) \u00d7 100 on latency"
    negative_label: str = "B slower"  # what each end of the axis means
    positive_label: str = "B faster"
    threshold: float | None = None  # shaded +/- band
    # The legend: what each mark stands for ("" leaves a mark out of it).
    point_label: str = "per-round delta"
    bar_label: str = "confidence interval"
    mid_label: str = "estimate"
    hollow_label: str = "kept apart (fell back to direct timing)"
    tone_label: str = "colour: the shape's verdict"


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
    """``answer``: the per-operator verdict summary, which every form puts where its reader
    looks first (HTML and Markdown right under the title, the terminal's text at the end,
    its last lines); ``blocks``: the details."""

    title: str
    blocks: tuple[Block, ...]
    answer: tuple[Block, ...] = ()


# --------------------------------------------------------------------------- formatting
