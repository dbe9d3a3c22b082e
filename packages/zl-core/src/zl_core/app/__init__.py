"""The application layer: what zl's commands do, as plain functions over plain records.

The command line (``zl_core.cli``) only turns arguments into these records and
prints what comes back; the nox sessions run the command line in the user's
interpreter; tests call the functions directly. Nothing here parses arguments or
decides an exit code.
"""

from zl_core.campaigns.canary import CHOICES as CANARY_CHOICES  # --canary's values
from zl_core.foundation.formats import duration  # how every command writes a duration
from zl_core.interface.phases import (
    LABELS as PHASE_LABELS,  # how a plan names the phase a cell spends most in
)
from zl_core.interface.ttgir_layout import (
    LAUNCH_FLOOR,  # the launches that make a kernel variant count in a screen
)
from zl_core.plugins.host import plugin_host  # the one host a command builds and hands to every function

from .ab_plan import AbPlan, ab_plan
from .commands import AbOutcome, ScreenOutcome, ScreenPlan, ab, screen, screen_plan
from .device_users import CHOICES as OTHER_PROCESS_CHOICES  # --other-processes' values
from .options import AbOptions, ConfigUse, Lanes, Measurement, ScreenOptions, SwitchChoice, Where
from .reports import campaign_report, finished_ab_report, keep_report_json

__all__ = [
    "CANARY_CHOICES",
    "LAUNCH_FLOOR",
    "OTHER_PROCESS_CHOICES",
    "PHASE_LABELS",
    "AbOptions",
    "AbOutcome",
    "AbPlan",
    "ConfigUse",
    "Lanes",
    "Measurement",
    "ScreenOptions",
    "ScreenOutcome",
    "ScreenPlan",
    "SwitchChoice",
    "Where",
    "ab",
    "ab_plan",
    "campaign_report",
    "duration",
    "finished_ab_report",
    "keep_report_json",
    "plugin_host",
    "screen",
    "screen_plan",
]
