"""Every verdict name zl gives, spelled once: the engine decides them, the report model
carries them, and zl_report ranks and colours them by these names.
"""

from __future__ import annotations

# -- a screen's IR verdicts (one per operator) --------------------------------------------
IR_CHANGED = "IR_CHANGED"
NO_IR_DIFF = "NO_IR_DIFF"
NO_TRITON = "NO_TRITON"
NO_ROWS = "NO_ROWS"
TIMEOUT = "TIMEOUT"
#: A cell made no progress (no output, no compile, no timing call) for its stall window.
STALLED = "STALLED"
FAILED = "FAILED"
#: Never run (dismissed by the user with --dismiss, or skipped unconditionally by the
#: benchmark), or run and skipped by the benchmark itself at run time (its reason in the notes).
SKIPPED = "SKIPPED"
IR_VERDICTS = (IR_CHANGED, NO_IR_DIFF, NO_TRITON, NO_ROWS, TIMEOUT, STALLED, FAILED, SKIPPED)
#: An A/B operator stopped after round 1 because the switch left its TTGIR identical.
SWITCH_NO_IR_DIFF = "SWITCH_NO_IR_DIFF"

# -- A/B rounds' timing verdicts (per shape and per operator) -----------------------------
FASTER = "FASTER"
SLOWER = "SLOWER"
NO_CHANGE = "NO_CHANGE"
INCONCLUSIVE = "INCONCLUSIVE"
#: Operator level only: the operator's calls go both ways.
MIXED = "MIXED"
SHAPE_VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE)
#: The verdicts that call a change in timing.
CALLS = (FASTER, SLOWER)
#: Shape verdicts that decide something (an estimate stands behind each).
DECIDED = (FASTER, SLOWER, NO_CHANGE)
