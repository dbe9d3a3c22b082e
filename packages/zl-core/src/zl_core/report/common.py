"""Shared pieces of every report model: the model shape, caliber section and check, JSON cleaning."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from zl_core.decisions.pairing import Pair
from zl_core.foundation.errors import BadInputError, CaliberMismatchError
from zl_core.interface import caliber
from zl_core.interface.contract import AUTOTUNE_REPLAY_FALLBACK
from zl_core.interface.contract import BENCHMARK_DIRECT_NO_CUDAGRAPH as FALLBACK_MARKER
from zl_core.interface.rows import CellRows

SCHEMA = 2
KINDS = ("pair", "rounds", "screen")
DEFAULT_THRESHOLD_PCT = 1.0
DIRECT_NOTE = ("direct-timed rows measure the host's launch path as much as the kernel: on sub-ms "
               "kernels they vary 2-3x between identical runs; read them as a noisier instrument")


# --------------------------------------------------------------------------- shared pieces


def caliber_section(identities: Mapping[str, Mapping | None]) -> dict:
    """The compared fields: values common to every cell, fields that differ, and per cell."""
    cells = {label: (caliber.caliber_of(ident) if ident else None)
             for label, ident in identities.items()}
    present = [c for c in cells.values() if c is not None]
    common, differs = {}, []
    for field in caliber.ALL_FIELDS:
        values = {_show(c.get(field)) for c in present}
        if len(values) == 1:
            common[field] = present[0].get(field)
        elif values:
            differs.append(field)
    return {"fields": list(caliber.ALL_FIELDS), "common": common, "differs": differs,
            "cells": cells}


def _show(value: object) -> str:
    return "<missing>" if value is None or value == "" else str(value)


def check_caliber(identities: Mapping[str, Mapping | None], *, allow_mismatch: bool
                  ) -> caliber.CaliberCheck:
    check = caliber.compare(identities)
    if check.problems and not allow_mismatch:
        raise CaliberMismatchError(list(check.problems))
    return check


def check_caliber_groups(groups: Iterable[Mapping[str, Mapping | None]], *, allow_mismatch: bool,
                         pinned: tuple[str, ...] | None = None
                         ) -> tuple[dict[str, Mapping | None], caliber.CaliberCheck]:
    """Compare each group of cells (one operator's) on its own and join the results.

    ``pinned``: the sides that share one autotune record (a re-tuned campaign's A and B;
    its side R replays its own): the autotune rule is checked within them and within the
    other sides, every other field across all. Returns every identity by its label and
    the joined check; raises :class:`CaliberMismatchError` on problems unless ``allow_mismatch``.
    """
    identities: dict[str, Mapping | None] = {}
    problems: list[str] = []
    warnings: list[str] = []
    for group in groups:
        identities.update(group)
        parts = [group] if pinned is None else [
            {k: v for k, v in group.items() if k.rsplit("/", 1)[-1] in pinned},
            {k: v for k, v in group.items() if k.rsplit("/", 1)[-1] not in pinned}]
        for part in parts:
            check = caliber.compare(part)
            problems += check.problems
            warnings += check.warnings
        if pinned is not None:
            problems += caliber.compare(group, autotune=False).problems
    check = caliber.CaliberCheck(problems=tuple(dict.fromkeys(problems)), warnings=tuple(warnings))
    if check.problems and not allow_mismatch:
        raise CaliberMismatchError(list(check.problems))
    return identities, check


def _median(values: Iterable[float]) -> float | None:
    values = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.median(values) if values else None


def _model(kind: str, title: str, section: dict, check: caliber.CaliberCheck, rows: list,
           summary: dict, notes: list[str], **extra: object) -> dict:
    return clean_model({"schema": SCHEMA, "kind": kind, "title": title, **extra, "caliber": section,
                   "caliber_problems": list(check.problems),
                   "caliber_warnings": list(check.warnings),
                   "rows": rows, "summary": summary, "notes": notes})


def clean_model(model: Mapping[str, object]) -> dict[str, object]:
    """A report model as strict JSON (:func:`_clean` on each of its values)."""
    return {str(k): _clean(v) for k, v in model.items()}


def _clean(value: object) -> object:
    """Strict JSON: NaN/inf become null, tuples lists, paths strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _require_dir(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.is_dir():
        raise BadInputError(f"{what} {path} does not exist or is not a directory")
    return path


def _delta_summary(pairs: Sequence[Pair]) -> dict:
    deltas = [p.delta_pct for p in pairs if p.delta_pct is not None]
    return {"n": len(deltas), "median_pct": _median(deltas),
            "min_pct": min(deltas) if deltas else None, "max_pct": max(deltas) if deltas else None}


def _cell_notes(label: str, cell: CellRows) -> list[str]:
    notes = [f"{label}: {n}" for n in cell.notes]
    fallbacks = cell.markers.get(FALLBACK_MARKER, 0)
    if fallbacks:
        notes.append(f"{label}: {fallbacks} graph-capture fallback(s) "
                     f"({FALLBACK_MARKER}); those rows are kept apart")
    replay = cell.markers.get(AUTOTUNE_REPLAY_FALLBACK, 0)
    if replay:
        notes.append(f"{label}: {replay} autotune replay fallback(s): configs not fully pinned")
    return notes
