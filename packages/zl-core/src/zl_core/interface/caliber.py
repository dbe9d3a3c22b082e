"""Caliber: the measurement conditions a number is only comparable under.

This module is the single definition of the caliber fields. Screen tables,
status files and the report all take their columns from :data:`CALIBER_FIELDS`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

# The identity file is read and written in zl_core.interface.identity alone; its names are
# taken here too, where the core and the cell plugins have always found them.
from zl_core.interface.identity import IDENTITY_NAME as IDENTITY_NAME
from zl_core.interface.identity import CellIdentity as CellIdentity
from zl_core.interface.identity import fill_identity as fill_identity
from zl_core.interface.identity import merge_identity as merge_identity
from zl_core.interface.identity import read_identity as read_identity
from zl_core.interface.identity import write_identity as write_identity

#: Fields that must be equal across every cell of one comparison.
CALIBER_FIELDS = (
    "backend",
    "device",
    "device_name",
    "timer",
    "bench_level",
    "shape_mode",
    "tuner_cache",
    "direct_repeat",
    "replay_ms",
    "l2",
    "timing",
    "triton_version",
    "compiler_build",
    "compiler_env",
    "torch_version",
    "compile_only",
    "target",
    "concurrency",
    "pipeline",
    "gate_release",
    "start",
)
#: What a field means when an identity predates it.
FIELD_DEFAULTS = {"concurrency": 1, "pipeline": 1, "replay_ms": "rep/10",  # rep/10: ten replays shared rep
                  "timing": "full",  # before --timing every cell timed the reference too
                  # Before --l2 the graph timer ran its calls back to back (warm) and the
                  # direct one was do_bench, which clears the cache before every call.
                  "l2": lambda ident: (None if ident.get("timer") in (None, "none") else
                                       "flush" if ident.get("timer") == "direct" else "warm"),
                  "start": "cold",  # before --start every cell was a new interpreter
                  # Before --gate-release a pipelined cell kept the gate to its exit.
                  "gate_release": lambda ident: "exit" if (ident.get("pipeline") or 1) > 1 else None,
                  # Before these were recorded, neither the build nor the inherited compiler
                  # variables are known: such cells compare equal to each other (an old
                  # campaign reports as it did) and to no recorded value.
                  "compiler_build": "unrecorded", "compiler_env": "unrecorded"}
#: Compared by rule rather than equality: one side records, the other replays it.
AUTOTUNE_FIELD = "autotune_mode"
ALL_FIELDS = (*CALIBER_FIELDS, AUTOTUNE_FIELD)


def caliber_of(identity: Mapping | None) -> dict:
    """The caliber fields of an identity, None for missing ones."""
    identity = identity or {}
    return {f: identity.get(f) for f in ALL_FIELDS}


@attrs.frozen(kw_only=True)
class CaliberCheck:
    problems: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def compare(cells: Mapping[str, Mapping | None], *, autotune: bool = True) -> CaliberCheck:
    """Compare the identities of the cells of one comparison, labelled for messages.

    Every :data:`CALIBER_FIELDS` value must agree. For the autotune mode, two
    recording cells are refused by name (each side tuned for itself, so the
    switch's effect is mixed with the autotuner's), uncontrolled cells and
    recording on a shared tuner cache are warnings. ``autotune`` False leaves the
    autotune rule out (sides that tune each for itself on purpose, a re-tuned
    campaign's B and R, are checked by it one record at a time).
    """
    problems: list[str] = []
    warnings: list[str] = []
    present = {}
    for label, ident in cells.items():
        if not ident:
            problems.append(f"{label}: no {IDENTITY_NAME}; its conditions are unknown")
        else:
            present[label] = ident
    if len(present) >= 2:
        for field in CALIBER_FIELDS:
            values = {label: _norm(ident[field] if field in ident else _default(field, ident))
                      for label, ident in present.items()}
            if len(set(values.values())) > 1:
                shown = " ".join(f"{label}={v}" for label, v in values.items())
                problems.append(f"caliber field {field!r} differs: {shown}")
    if not autotune:
        return CaliberCheck(problems=tuple(problems), warnings=tuple(warnings))
    modes = {label: ident.get(AUTOTUNE_FIELD) for label, ident in present.items()}
    recorders = [label for label, m in modes.items() if m == "record"]
    if len(recorders) > 1:
        problems.append(
            "autotune_mode: record vs record (" + ", ".join(recorders) + "): each side tuned "
            "for itself, so config choice is mixed into the difference; replay one side's record")
    for label, mode in modes.items():
        if mode in (None, ""):
            problems.append(f"caliber field 'autotune_mode' missing in {label}")
        elif mode == "uncontrolled":
            warnings.append(f"{label}: autotune configs were not pinned (autotune_mode=uncontrolled)")
        elif mode == "record" and str(present[label].get("tuner_cache", "")).startswith("shared"):
            warnings.append(f"{label}: recorded on a shared tuner cache "
                            f"({present[label].get('tuner_cache')}); its picks may be inherited")
    sources = {str(ident.get("replay_source")) for ident in present.values()
               if ident.get(AUTOTUNE_FIELD) == "replay"}
    if len(sources) > 1:
        problems.append("autotune_mode: replay cells replay different records: " + ", ".join(sorted(sources)))
    return CaliberCheck(problems=tuple(problems), warnings=tuple(warnings))


def _default(field: str, identity: Mapping) -> object:
    """What ``field`` meant in an identity written before it was recorded."""
    default = FIELD_DEFAULTS.get(field)
    return default(identity) if callable(default) else default


def _norm(value: object) -> str:
    return "<missing>" if value is None or value == "" else str(value)
