"""The application layer: what zl's commands do, as plain functions over plain records.

The command line (``zl_core.cli``) only turns arguments into these records and
prints what comes back; the nox sessions run the command line in the user's
interpreter; tests call the functions directly. Nothing here parses arguments or
decides an exit code.
"""

from .commands import AbOutcome, ScreenOutcome, ScreenPlan, ab, screen, screen_plan
from .options import AbOptions, ConfigUse, Lanes, Measurement, ScreenOptions, SwitchChoice, Where
from .reports import campaign_report, keep_report_json

__all__ = [
    "AbOptions",
    "AbOutcome",
    "ConfigUse",
    "Lanes",
    "Measurement",
    "ScreenOptions",
    "ScreenOutcome",
    "ScreenPlan",
    "SwitchChoice",
    "Where",
    "ab",
    "campaign_report",
    "keep_report_json",
    "screen",
    "screen_plan",
]
