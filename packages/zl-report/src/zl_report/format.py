"""How a report shows its values: labels, percentages, latencies, intervals, verdicts
and their reasons. The layout and the sections both use these, so a number is written
the same way in every table and every form."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

SIGN_NOTE = "delta = (A / B - 1) x 100 on latency; positive = B faster"
VERDICT_TONES = {"FASTER": "good", "SLOWER": "bad", "MIXED": "warn", "INCONCLUSIVE": "warn",
                 "NO_CHANGE": None, "IR_CHANGED": "warn", "NO_IR_DIFF": None,
                 "NO_TRITON": "muted", "NO_ROWS": "bad", "TIMEOUT": "bad", "FAILED": "bad"}


#: Verdicts that say an operator did not change; beyond FOLD_ABOVE operators the HTML
#: page folds their sections and puts them last (failures, IR changes and timing changes
#: stay open and first), and folds every operator's IR change under its first line.
UNCHANGED = frozenset({"NO_CHANGE", "INCONCLUSIVE", "NO_IR_DIFF", "NO_TRITON"})
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


def duration(seconds: float) -> str:
    """Seconds as a reader takes them in: ``4.2 s``, ``42 s``, ``4.2 min``, ``4.2 h``."""
    seconds = float(seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def pct(value: float | None, *, signed: bool = True, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{float(value):+.{digits}f}%" if signed else f"{float(value):.{digits}f}%"


def ms(value: float | None) -> str:
    return "-" if value is None else f"{float(value):.6f}"


def speedup(delta_pct: float | None) -> str:
    """B's speedup over A, ``A / B`` (the delta's own ratio: ``1.10x`` is 10% faster)."""
    if delta_pct is None or (isinstance(delta_pct, float) and not math.isfinite(delta_pct)):
        return "-"
    return f"{1 + float(delta_pct) / 100:.3f}x"


def median_ms(values: Sequence[object]) -> str:
    usable = sorted(float(v) for v in values or () if isinstance(v, (int, float)) and math.isfinite(v))
    if not usable:
        return "-"
    mid = len(usable) // 2
    return ms(usable[mid] if len(usable) % 2 else (usable[mid - 1] + usable[mid]) / 2)


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
        if row.get("verdict") != "INCONCLUSIVE" or row.get("segment", "main") != "main":
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


def shape_verdict(row: dict, threshold_pct: object) -> str:
    """A shape's verdict cell: the verdict, with the reason when it is undecided."""
    verdict = row.get("verdict")
    if verdict == "INCONCLUSIVE":
        return f"INCONCLUSIVE: {row.get('reason') or undecided_reason(row.get('stats') or {}, threshold_pct)}"
    return verdict or row.get("reason") or "-"


def interval_estimate(stats: dict) -> float | None:
    """The estimate a shape's interval is built around (the order-adjusted one), so the
    table, the plot's marker and the verdict line agree; the median of the per-round
    deltas for a model written before estimates were recorded."""
    value = stats.get("estimate_pct")
    return value if isinstance(value, int | float) else stats.get("median_delta_pct")


def _finite(values: Sequence[object]) -> tuple[float, ...]:
    return tuple(float(v) for v in values
                 if isinstance(v, (int, float)) and math.isfinite(float(v)))
