"""Accounting a sealed A/B campaign into classes (``classes.json``), and re-accounting it
under a corrected rule without a device: a re-accounted class may demote a workload,
never promote it, and is written outside the sealed run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from zl_core.foundation.stamps import utc_stamp

from .classes import CLASSES, classify, demotes
from .evidence import gather

SCHEMA = 1


def account(campaign: Path, model: Mapping, *, floor: int, gain_pct: float,
            regression_pct: float) -> dict:
    """The classes of every workload of an A/B campaign, with what they were decided from."""
    evidence, counts = gather(campaign, model, floor=floor)
    decided = [classify(e, gain_pct=gain_pct, regression_pct=regression_pct) for e in evidence]
    by_op = {c["op"]: c for c in counts}
    return {"schema": SCHEMA, "campaign": Path(campaign).name, "written": utc_stamp(),
            "rule": {"launch_floor": floor, "gain_pct": gain_pct, "regression_pct": regression_pct},
            "counts": dict(Counter(d.cls for d in decided)),
            "classes": [{**d.to_json(), "evidence": _evidence_json(e, by_op.get(e.op))}
                        for d, e in zip(decided, evidence, strict=True)]}


def reaccount(sealed: Mapping, campaign: Path, model: Mapping, *, floor: int, gain_pct: float,
              regression_pct: float) -> dict:
    """The campaign's classes under another rule, each demoted at most: where the new rule
    would promote a workload, its sealed class stays and the promotion is named."""
    derived = account(campaign, model, floor=floor, gain_pct=gain_pct, regression_pct=regression_pct)
    before = {c["op"]: c["class"] for c in sealed.get("classes") or []}
    changes = []
    for entry in derived["classes"]:
        old, new = before.get(entry["op"]), entry["class"]
        if old is None or old == new:
            continue
        if demotes(old, new):
            changes.append({"op": entry["op"], "sealed": old, "derived": new, "taken": new})
        else:
            changes.append({"op": entry["op"], "sealed": old, "derived": new, "taken": old})
            entry["why"] = (f"stays {old}: the new rule would promote it to {new} ({entry['why']}), "
                            "and a re-accounting never promotes")
            entry["class"] = old
    derived["counts"] = dict(Counter(c["class"] for c in derived["classes"]))
    derived["changes"] = changes
    return derived


def _evidence_json(e, counted: Mapping | None) -> dict:
    out = {"failure": e.failure or None, "unchanged": e.unchanged or None,
           "correctness_a": e.correctness_a.to_json() if e.correctness_a else None,
           "correctness_b": e.correctness_b.to_json() if e.correctness_b else None,
           "order_deltas_pct": dict(e.order_deltas_pct)}
    if counted:
        out.update({k: v for k, v in counted.items() if k != "op"})
    return out


def read_classes(path: Path) -> dict | None:
    """A classes.json, or None when it is missing or not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # None: zl reaccount refuses it by name
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return None
    if any(not isinstance(c, dict) or c.get("class") not in CLASSES for c in data.get("classes") or []):
        return None
    return data
