"""The compare report: one model across several A/B campaigns of the same operators (other
vendors, builds, switches, dates). Per operator and campaign the verdict, the estimate and
interval it was decided on and the IR change; where the campaigns disagree; and, at each
operator, whatever makes its campaigns incomparable (absent from one, timers or shapes
that differ). The conditions that differ between campaigns are named, and label them,
instead of refusing the comparison.

Built from each campaign's own rounds model (``build_rounds``), so a campaign is judged
here exactly as ``zl report`` judges it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zl_core.foundation import verdicts
from zl_core.foundation.verdicts import FASTER, MIXED, NO_CHANGE, SLOWER

from .common import SCHEMA, clean_model

#: The conditions compared, in the order a campaign's label draws on them.
CONDITIONS = ("device", "switch", "compiler", "triton", "provider_commit", "date", "driver",
              "host", "timer", "kind", "rounds", "threshold_pct")
#: Operator verdicts that decide a direction (INCONCLUSIVE does not).
DECIDED = (FASTER, SLOWER, MIXED, NO_CHANGE)  # an operator's verdicts that decide


def _joined(values: object) -> str:
    return ", ".join(str(v) for v in values) if isinstance(values, list) and values else "-"


def conditions(model: Mapping) -> dict[str, str]:
    """What a campaign ran under, each as one string ("-" where unrecorded)."""
    s = model["summary"]
    prov = s.get("provenance") or {}
    common = (model.get("caliber") or {}).get("common") or {}
    aa = bool((s.get("controls") or {}).get("aa"))
    switch = "-" if aa else f"{s.get('switch') or '-'} {s.get('a_value')}->{s.get('b_value')}"
    return {"device": _joined(prov.get("devices")), "switch": switch,
            "compiler": _joined(prov.get("compiler_builds")),
            "triton": str(common.get("triton_version") or "-"),
            "provider_commit": _joined(prov.get("provider_commits")),
            "date": str(prov.get("first_started") or "-")[:10], "driver": _joined(prov.get("drivers")),
            "host": _joined(prov.get("hosts")), "timer": str(common.get("timer") or "-"),
            "kind": "A/A" if aa else "A/B", "rounds": str(s.get("rounds")),
            "threshold_pct": f"{float(s.get('threshold_pct') or 0):g}"}


def _labels(conds: list[dict[str, str]], names: list[str], differ: list[str]) -> list[str]:
    """A short label per campaign: the values of the fewest leading differing conditions
    that tell the campaigns apart (its folder's name where none does)."""
    for k in range(1, len(differ) + 1):
        labels = [" \u00b7 ".join(c[key] for key in differ[:k]) for c in conds]
        if len(set(labels)) == len(labels):
            return labels
    labels = [" \u00b7 ".join([*(c[key] for key in differ[:2]), name]) for c, name in zip(conds, names, strict=True)]
    if len(set(labels)) < len(labels):
        labels = [f"C{i + 1}: {label}" for i, label in enumerate(labels)]
    return labels


def _ir(ir: Mapping | None) -> str | None:
    if not ir:
        return None
    if ir.get("raw_equal"):
        return "identical"
    return "names only" if ir.get("canonical_equal") else "changed"


def _entry(model: Mapping, op: str) -> dict:
    """One operator in one campaign."""
    s = model["summary"]
    found = next((o for o in s.get("operators") or () if o["op"] == op), None)
    if found is not None:
        shapes = sorted({r["shape"] for r in model["rows"] if r["op"] == op and r.get("counted")})
        counts = (found.get("operator") or {}).get("counts") or {}
        return {"status": "judged", "verdict": found["verdict"], "estimate": found.get("estimate"),
                "ir": _ir(found.get("ir")), "shapes": shapes,
                "decided_shapes": sum(int(counts.get(v) or 0) for v in verdicts.DECIDED),
                "timer": found.get("timer"), "control": bool(found.get("control")), "reason": ""}
    for key, status in (("skipped", "skipped"), ("no_report", "no_report")):
        hit = next((x for x in s.get(key) or () if x["op"] == op), None)
        if hit is not None:
            return {"status": status, "verdict": None, "estimate": None, "ir": None, "shapes": [],
                    "decided_shapes": 0, "timer": None, "control": False, "reason": hit["reason"]}
    return {"status": "absent", "verdict": None, "estimate": None, "ir": None, "shapes": [],
            "decided_shapes": 0, "timer": None, "control": False, "reason": "not in this campaign"}


def _operator(op: str, entries: list[dict], labels: list[str]) -> dict:
    judged = [(label, e) for label, e in zip(labels, entries, strict=True) if e["status"] == "judged"]
    directions = {e["verdict"] for _, e in judged if e["verdict"] in DECIDED}
    if len(judged) < 2:
        agreement = "single"
    elif len(directions) > 1:
        agreement = "disagree"
    elif any(e["verdict"] not in DECIDED for _, e in judged):
        agreement = "undecided in some"
    else:
        agreement = "agree"
    said = "; ".join(f"{e['verdict']} on {label}" for label, e in judged)
    incomparable = []
    missing = [label for label, e in zip(labels, entries, strict=True) if e["status"] != "judged"]
    if missing:
        incomparable.append("no verdict on " + ", ".join(
            f"{label} ({e['reason']})" for label, e in zip(labels, entries, strict=True)
            if e["status"] != "judged"))
    timers = {e["timer"] for _, e in judged}
    if len(timers) > 1:
        incomparable.append("timers differ (" + ", ".join(f"{e['timer']} on {label}" for label, e in judged) + ")")
    shape_sets = [set(e["shapes"]) for _, e in judged]
    if len(shape_sets) > 1 and len({frozenset(s) for s in shape_sets}) > 1:
        common = set.intersection(*shape_sets)
        incomparable.append("shapes differ (" + ", ".join(f"{len(e['shapes'])} on {label}" for label, e in judged)
                            + f"; {len(common)} in common)")
    irs = {e["ir"] for _, e in judged if e["ir"]}
    return {"op": op, "entries": entries, "agreement": agreement,
            "ir_differs": len(irs) > 1, "incomparable": incomparable,
            "text": said or "no verdict in any campaign"}


def build_compare(models: Sequence[Mapping], names: Sequence[str]) -> dict:
    """The compare model of rounds ``models`` (each campaign's, in the order given) whose
    folders are ``names``."""
    conds = [conditions(m) for m in models]
    differ = [k for k in CONDITIONS if len({c[k] for c in conds}) > 1]
    same = {k: conds[0][k] for k in CONDITIONS if k not in differ}
    labels = _labels(conds, list(names), differ)
    ops: list[str] = []
    for m in models:
        for key in ("operators", "skipped", "no_report"):
            ops += [o["op"] for o in m["summary"].get(key) or () if o["op"] not in ops]
    operators = [_operator(op, [_entry(m, op) for m in models], labels) for op in ops]
    counts: dict[str, int] = {}
    for o in operators:
        counts[o["agreement"]] = counts.get(o["agreement"], 0) + 1
    campaigns = [{"campaign": m["summary"]["campaign"], "label": label, "title": m["title"],
                  "conditions": c, "provenance": m["summary"].get("provenance"),
                  "threshold_pct": m["summary"].get("threshold_pct")}
                 for m, label, c in zip(models, labels, conds, strict=True)]
    notes = []
    if len({c["threshold_pct"] for c in conds}) > 1:
        notes.append("the campaigns were judged at different thresholds: a NO_CHANGE means "
                     "'within its own threshold'")
    problems = [f"{label}: {p}" for m, label in zip(models, labels, strict=True) for p in m["caliber_problems"]]
    warnings = [f"{label}: {w}" for m, label in zip(models, labels, strict=True) for w in m["caliber_warnings"]]
    title = f"zl compare: {len(models)} campaigns" + (f" differing in {', '.join(differ)}" if differ else "")
    return clean_model({"schema": SCHEMA, "kind": "compare", "title": title, "campaigns": campaigns,
                   "conditions": {"differ": differ, "same": same}, "operators": operators,
                   "summary": {"campaigns": len(models), "operators": len(operators),
                               "agreement": counts},
                   "caliber_problems": problems, "caliber_warnings": warnings, "notes": notes})
