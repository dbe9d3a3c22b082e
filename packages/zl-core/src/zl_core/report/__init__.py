"""Report models: plain JSON-able dicts built from cells and campaign folders.

Three kinds, one outer form (documented in docs/report-json.md)::

    {"schema": 1, "kind": "pair" | "rounds" | "screen", "title": str,
     "caliber": {...}, "caliber_problems": [...], "caliber_warnings": [...],
     "rows": [...], "summary": {...}, "notes": [...]}

Every builder compares the caliber of the cells it is about to compare before
reading a single latency; a mismatch raises :class:`CaliberMismatchError`
unless the caller allows it, in which case the problems travel in the model.

Renderers (the zl-report package, or the plain fallback in ``zl report``) only
read these dicts; nothing here formats for a screen.
"""

from __future__ import annotations

from zl_core.decisions.status import UNJUDGED_FLAGS

from .common import (
    DEFAULT_THRESHOLD_PCT,
    DIRECT_NOTE,
    KINDS,
    SCHEMA,
    caliber_section,
    check_caliber,
    check_caliber_groups,
)
from .dispatch import build
from .gate import VERDICT_KINDS, gate_hits
from .pair import build_pair
from .rounds_drift import DRIFT_RULE
from .rounds_report import build_rounds
from .screen_report import NOISE_FLOOR, build_screen

__all__ = [
    "DEFAULT_THRESHOLD_PCT",
    "DIRECT_NOTE",
    "DRIFT_RULE",
    "KINDS",
    "NOISE_FLOOR",
    "SCHEMA",
    "UNJUDGED_FLAGS",
    "VERDICT_KINDS",
    "build",
    "build_pair",
    "build_rounds",
    "build_screen",
    "caliber_section",
    "check_caliber",
    "check_caliber_groups",
    "gate_hits",
]
