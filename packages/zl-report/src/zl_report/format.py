"""How a report shows its values: labels, percentages, latencies, intervals, verdicts
and their reasons. The layout and the sections both use these, so a number is written
the same way in every table and every form."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from zl_core.foundation.formats import duration as duration  # zl's one duration format
from zl_core.foundation.verdicts import (
    FAILED,
    FASTER,
    INCONCLUSIVE,
    IR_CHANGED,
    MIXED,
    NO_CHANGE,
    NO_IR_DIFF,
    NO_ROWS,
    NO_TRITON,
    SLOWER,
    TIMEOUT,
)

SIGN_NOTE = "delta = (A / B - 1) x 100 on latency; positive = B faster"
VERDICT_TONES = {FASTER: "good", SLOWER: "bad", MIXED: "warn", INCONCLUSIVE: "warn",
                 NO_CHANGE: None, IR_CHANGED: "warn", NO_IR_DIFF: None,
                 NO_TRITON: "muted", NO_ROWS: "bad", TIMEOUT: "bad", FAILED: "bad"}


#: Verdicts that say an operator did not change; beyond FOLD_ABOVE operators the HTML
#: page folds their sections and puts them last (failures, IR changes and timing changes
#: stay open and first), and folds every operator's IR change under its first line.
UNCHANGED = frozenset({NO_CHANGE, INCONCLUSIVE, NO_IR_DIFF, NO_TRITON})
# Up to 20 operators every section is open: a reader scrolls through that many (the real
# campaigns hold 2 to 7). A 200-operator page was 165,000 px tall with all of them open.
FOLD_ABOVE = 20


def anchor(op: str) -> str:
    """The id of an operator's section."""
    return "op-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in str(op))


_SIZE = re.compile(r"torch\.Size\(\[([\d,\s]*)\]\)|\[(\d+(?:,\s*\d+)+)\]")


def short_shape(label: object) -> str:
    """``float16 [torch.Size([2, 384, 384]), torch.Size([2, 384, 384])]`` as
    ``float16 2x384x384, 2x384x384``: what a reader compares, in a column that fits.
    The model keeps the label FlagGems printed."""
    text = str(label)
    def dims(m: re.Match) -> str:
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        return "x".join(d.strip() for d in inner.split(",") if d.strip()) or "scalar"

    short = _SIZE.sub(dims, text)
    return re.sub(r"\[([^\[\]]*)\]", r"\1", short) if short != text else text


def pct(value: float | None, *, signed: bool = True, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{float(value):+.{digits}f}%" if signed else f"{float(value):.{digits}f}%"


def latency(ms: float | None) -> str:
    """A latency given in ms, in the unit it reads best in (ns, µs, ms, s) with four
    significant digits: ``2.647 µs``, ``26.47 µs``, ``1.234 ms``."""
    if ms is None or not isinstance(ms, int | float) or not math.isfinite(ms):
        return "-"
    value = float(ms)
    for scale, unit in ((1e-3, "ns"), (1.0, "\u00b5s"), (1e3, "ms"), (1e6, "s")):
        shown = value / scale * 1e3  # the value in this unit
        if abs(shown) < 1000 or unit == "s":
            digits = max(0, 4 - len(str(int(abs(shown)))))
            return f"{shown:.{digits}f} {unit}"
    return f"{value:g} ms"  # pragma: no cover - the loop always returns


#: What "x faster" and "x slower" mean, said once in every form beside the sign note.
RATIO_NOTE = ("1.28x slower: B takes 1.28 times A's time; 1.28x faster: A takes 1.28 times B's; "
              "both from the estimate (A / B = 1 + delta / 100)")


def ratio(delta_pct: float | None) -> str:
    """The delta as the ratio of the two latencies, in words: ``1.28x slower`` (B takes
    1.28 times A's time), ``1.015x faster`` (A takes 1.015 times B's; three decimals under
    1.1x), ``same`` within 0.05%."""
    if delta_pct is None or not isinstance(delta_pct, int | float) or not math.isfinite(delta_pct) \
            or delta_pct <= -100:
        return "-"
    a_over_b = 1 + float(delta_pct) / 100
    if abs(a_over_b - 1) < 5e-4:
        return "same"
    factor = a_over_b if a_over_b > 1 else 1 / a_over_b
    digits = 3 if factor < 1.1 else 2  # 1.004x, not 1.00x, for a change under 10%
    return f"{factor:.{digits}f}x {'faster' if a_over_b > 1 else 'slower'}"


def median_latency(values: Sequence[object]) -> str:
    usable = sorted(float(v) for v in values or () if isinstance(v, (int, float)) and math.isfinite(v))
    if not usable:
        return "-"
    mid = len(usable) // 2
    return latency(usable[mid] if len(usable) % 2 else (usable[mid - 1] + usable[mid]) / 2)


def span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "-"
    return f"{pct(low)} .. {pct(high)}"


def undecided_reason(stats: dict, threshold_pct: object) -> str:
    """Why a shape is INCONCLUSIVE, from its statistics: what withdrew the call, or what
    its interval lacks."""
    notes = [str(n) for n in stats.get("notes") or () if n]
    if notes:
        return notes[0]
    lo, hi = stats.get("ci_low_pct"), stats.get("ci_high_pct")
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in (lo, hi)):
        return "no interval yet: too few rounds for its first planned look"
    if isinstance(threshold_pct, int | float):
        return f"its interval {span(lo, hi)} crosses the ±{threshold_pct:g}% threshold"
    return f"its interval {span(lo, hi)} decides nothing"


def undecided_summary(model: Mapping) -> str:
    """One line for every format, the pull-request one included: how many shapes are
    undecided, and why, counted by kind of reason."""
    threshold = model["summary"].get("threshold_pct")
    kinds: dict[str, int] = {}
    for row in model["rows"]:
        if row.get("verdict") != INCONCLUSIVE or row.get("segment", "main") != "main":
            continue
        why = row.get("reason") or undecided_reason(row.get("stats") or {}, threshold)
        kind = ("its interval crosses the threshold" if "crosses the" in why
                else "no interval yet" if why.startswith("no interval yet")
                else "withdrawn by the campaign's false-discovery control" if "false-discovery" in why
                else why)
        kinds[kind] = kinds.get(kind, 0) + 1
    if not kinds:
        return ""
    parts = sorted(kinds.items(), key=lambda kv: -kv[1])
    return (f"undecided shapes: {sum(kinds.values())} ("
            + " · ".join(f"{n} × {kind}" for kind, n in parts[:4])
            + (f" · {len(parts) - 4} other reasons" if len(parts) > 4 else "") + ")")


def shape_verdict(row: dict) -> str:
    """A shape's verdict cell: the verdict alone (its reason, when undecided, is
    :func:`shape_why`'s column), or why the shape has none."""
    return row.get("verdict") or row.get("reason") or "-"


def shape_why(row: dict, threshold_pct: object) -> str:
    """Why a shape is INCONCLUSIVE ("" for any other)."""
    if row.get("verdict") != INCONCLUSIVE:
        return ""
    return row.get("reason") or undecided_reason(row.get("stats") or {}, threshold_pct)


def interval_estimate(stats: dict) -> float | None:
    """The estimate a shape's interval is built around (the order-adjusted one), so the
    table, the plot's marker and the verdict line agree; the median of the per-round
    deltas for a model written before estimates were recorded."""
    value = stats.get("estimate_pct")
    return value if isinstance(value, int | float) else stats.get("median_delta_pct")


def _finite(values: Sequence[object]) -> tuple[float, ...]:
    return tuple(float(v) for v in values
                 if isinstance(v, (int, float)) and math.isfinite(float(v)))
