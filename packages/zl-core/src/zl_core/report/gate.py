"""The --fail-on gate: where the named verdicts occur in a rounds report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zl_core.foundation.verdicts import FASTER, INCONCLUSIVE, SLOWER

VERDICT_KINDS = {"faster": FASTER, "slower": SLOWER, "inconclusive": INCONCLUSIVE}


def gate_hits(model: Mapping, kinds: Iterable[str]) -> list[str]:
    """Where the verdicts named by ``--fail-on`` occur (operator and shape level).

    Controls are left out: a verdict on an A/A control is a false positive to
    be counted, not a finding. Pair and screen reports carry no such verdicts.
    """
    wanted: set[str] = set()
    for kind in kinds:
        wanted.update(VERDICT_KINDS.values() if kind == "any" else {VERDICT_KINDS[kind]})
    hits: list[str] = []
    if model.get("kind") != "rounds":
        return hits
    for op in model["summary"].get("operators", []):
        if not op.get("control") and op.get("verdict") in wanted:
            hits.append(f"{op['op']}: {op['verdict']}")
    for row in model.get("rows", []):
        if not row.get("control") and row.get("verdict") in wanted:
            hits.append(f"{row['op']} {row['shape']}: {row['verdict']}")
    return hits
