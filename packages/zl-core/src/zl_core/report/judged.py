"""Which rules judged a campaign when it finished, which judge it now, and the verdicts
that differ between the two; and the classes a sealed campaign was accounted into.

``zl ab`` keeps the report it printed at the end as the campaign's ``report.json``. A
later ``zl report`` judges the same cells again, by the rules of the zl that runs it
(``stats.RULES``); where that judgement differs from the kept one, the report shows
both verdicts and why, instead of silently replacing one with the other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TypeGuard

from zl_core.foundation.stamps import utc_stamp
from zl_core.store.layout import CampaignLayout

#: Reports written before ``plan.rules`` existed were judged by the first rules
#: (docs/statistics.md, section 11).
FIRST_RULES = 1


def judged_then_and_now(layout: CampaignLayout, model_now: Mapping) -> dict:
    """``summary.judged`` of a rounds report whose model (so far) is ``model_now``."""
    summary = model_now["summary"]
    now = {"rules": (summary.get("plan") or {}).get("rules"), "schema": model_now.get("schema"),
           "threshold_pct": summary.get("threshold_pct")}
    kept, problem = _kept(layout)
    if kept is None:
        text = f"judged by rules {now['rules']}" + (f"; {problem}" if problem else "")
        return {"then": None, "now": now, "changed_operators": [], "changed_shapes": [],
                "why": [], "text": text}
    kept_summary = found if isinstance(found := kept.get("summary"), Mapping) else {}
    then = {"rules": _rules(kept_summary), "schema": kept.get("schema"),
            "threshold_pct": kept_summary.get("threshold_pct"), "written": _written(layout)}
    ops = _changed(_by_op(kept_summary.get("operators")), _by_op(summary.get("operators")))
    shapes = _changed(_by_shape(kept.get("rows")), _by_shape(model_now.get("rows")))
    why = _why(then, now)
    if (ops or shapes) and not why:
        why = [("same rules and threshold: the campaign's cells, or how zl reads them, changed "
                "after report.json was written")]
    if ops or shapes:
        text = (f"{len(ops)} operator and {len(shapes)} shape verdict(s) differ from the "
                f"judgement kept when the campaign finished (report.json, rules {then['rules']}): "
                + "; ".join(why))
    else:
        text = (f"the verdicts agree with the judgement kept when the campaign finished "
                f"(report.json, rules {then['rules']}; now rules {now['rules']})")
    return {"then": then, "now": now,
            "changed_operators": [{"op": op, "then": a, "now": b} for (op,), a, b in ops],
            "changed_shapes": [{"op": key[0], "shape": key[1], "then": a, "now": b}
                               for key, a, b in shapes],
            "why": why, "text": text}


def _kept(layout: CampaignLayout) -> tuple[dict | None, str]:
    path = layout.report_json
    if not path.is_file():
        return None, ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"the kept {path.name} cannot be read ({' '.join(str(exc).split())[:80]}), so there is no earlier judgement to compare"
    if not isinstance(data, dict) or data.get("kind") != "rounds":
        return None, f"the kept {path.name} is not a rounds report, so there is no earlier judgement to compare"
    return data, ""


def _rules(summary: Mapping) -> int:
    plan = summary.get("plan")
    rules = plan.get("rules") if isinstance(plan, Mapping) else None
    return rules if isinstance(rules, int) and not isinstance(rules, bool) else FIRST_RULES


def _written(layout: CampaignLayout) -> str | None:
    try:
        return utc_stamp(layout.report_json.stat().st_mtime)
    except OSError:
        return None  # safe: read a moment ago; gone since, its time is shown as unknown


def _by_op(operators: object) -> dict[tuple, str | None]:
    if not isinstance(operators, Sequence):
        return {}
    return {(str(o.get("op")),): o.get("verdict") for o in operators if isinstance(o, Mapping)}


def _by_shape(rows: object) -> dict[tuple, str | None]:
    if not isinstance(rows, Sequence):
        return {}
    return {(str(r.get("op")), str(r.get("shape"))): r.get("verdict")
            for r in rows if isinstance(r, Mapping)}


def _changed(then: Mapping[tuple, str | None], now: Mapping[tuple, str | None]) -> list[tuple]:
    """(key, then, now) for every key judged either time whose verdict differs."""
    keys = [*then, *(k for k in now if k not in then)]
    return [(k, then.get(k), now.get(k)) for k in keys if then.get(k) != now.get(k)]


def _why(then: Mapping, now: Mapping) -> list[str]:
    why = []
    if then["rules"] != now["rules"]:
        why.append(f"judged by rules {then['rules']} when it finished and by rules {now['rules']} "
                   "now (docs/statistics.md, section 11, says what changed)")
    a, b = then.get("threshold_pct"), now.get("threshold_pct")
    if _number(a) and _number(b) and float(a) != float(b):
        why.append(f"threshold +/-{float(a):g}% then, +/-{float(b):g}% now")
    return why


def _number(value: object) -> TypeGuard[float]:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(float(value)))


def sealed_classes(layout: CampaignLayout) -> dict | None:
    """The classes (G/C/B/R/K/X) a sealed A/B campaign was accounted into when it finished
    (its ``classes.json``), None for a campaign without them."""
    from zl_core.seal.account import read_classes
    from zl_core.seal.receipts import CLASSES_FILE

    data = read_classes(layout.root / CLASSES_FILE)
    if data is None:
        return None
    return {"rule": data.get("rule"), "counts": data.get("counts"),
            "classes": [{"op": c.get("op"), "class": c.get("class"), "why": c.get("why"),
                         "correctness": _correctness(c.get("evidence"))}
                        for c in data.get("classes") or []]}


def _correctness(evidence: object) -> dict:
    """Each side's accuracy-test counts as classes.json recorded them (None: not run), a
    field it lacks at its default."""
    import attrs

    from zl_core.seal.classes import Correctness

    known = attrs.fields_dict(Correctness)
    evidence = evidence if isinstance(evidence, dict) else {}
    out = {}
    for side in ("A", "B"):
        found = evidence.get(f"correctness_{side.lower()}")
        out[side] = (Correctness(**{k: v for k, v in found.items() if k in known}).to_json()
                     if isinstance(found, dict) else None)
    return out
