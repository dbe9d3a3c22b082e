"""Paired-round statistics: per-shape A/B verdicts, operator verdicts, adaptive stopping.

Rounds are the unit of replication. For one shape, round i gives one paired delta
``delta_i = (A_i / B_i - 1) * 100`` (A = switch off, B = switch on; positive = B faster).
The median delta gets an exact, distribution-free confidence interval from order
statistics, and the verdict compares that interval with a practical threshold.
docs/statistics.md explains every choice made here; keep the two in step.

Pure Python on purpose: zl-core must not depend on numpy/scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import attrs

from zl_core.errors import BadInputError

FASTER = "FASTER"
SLOWER = "SLOWER"
NO_CHANGE = "NO_CHANGE"
INCONCLUSIVE = "INCONCLUSIVE"
# Operator level only: some shapes called FASTER and others SLOWER.
MIXED = "MIXED"
SHAPE_VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE)

CI_METHOD = "order-statistic (exact, binomial)"
EARLY_CI_METHOD = "student-t (parametric early look)"
# Rounds an early look needs at least: two degrees of freedom for the t interval.
MIN_EARLY_ROUNDS = 3


# --------------------------------------------------------------------------- helpers


def _median(sorted_values: Sequence[float]) -> float:
    n = len(sorted_values)
    if n == 0:
        return math.nan
    mid = n // 2
    if n % 2:
        return float(sorted_values[mid])
    return (sorted_values[mid - 1] + sorted_values[mid]) / 2.0


@lru_cache(maxsize=4096)
def _binom_half_cdf(n: int, j: int) -> float:
    """P(X <= j) for X ~ Binomial(n, 1/2), from exact integer sums."""
    if j < 0:
        return 0.0
    if j >= n:
        return 1.0
    return sum(math.comb(n, i) for i in range(j + 1)) / 2**n


@lru_cache(maxsize=4096)
def order_statistic_rank(n: int, confidence: float) -> tuple[int, float]:
    """Rank k of the interval ``[d_(k), d_(n-k+1)]`` for the median, and its coverage.

    Coverage of that interval is ``1 - 2 * P(Binomial(n, 1/2) <= k - 1)`` for any
    continuous distribution of the deltas. Returns the largest (narrowest) k whose
    coverage is still >= ``confidence``; k = 0 means even ``[min, max]`` falls short,
    and the coverage returned is then that of ``[min, max]`` (what n can give at most).
    """
    if n <= 0:
        return 0, 0.0
    best_k, best_cov = 0, 1.0 - 2.0 * 0.5**n
    k = 1
    while k <= (n + 1) // 2:
        cov = 1.0 - 2.0 * _binom_half_cdf(n, k - 1)
        if cov < confidence:
            break
        best_k, best_cov = k, cov
        k += 1
    return best_k, best_cov


def min_rounds_for(confidence: float) -> int:
    """Fewest rounds whose ``[min, max]`` reaches ``confidence`` (6 at 95%)."""
    _check_confidence(confidence)
    n = 1
    while order_statistic_rank(n, confidence)[0] == 0:
        n += 1
    return n


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast only below the mean
        return 1.0 - _betainc(b, a, 1.0 - x)
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    frac = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            frac *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * frac / a


def student_t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@lru_cache(maxsize=256)
def student_t_quantile(p: float, df: int) -> float:
    """The t with ``student_t_cdf(t, df) == p`` (0.5 < p < 1), by bisection."""
    lo, hi = 0.0, 1.0
    while student_t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def early_look_level(confidence: float) -> tuple[float, int]:
    """Per-look confidence of the early looks and how many there are.

    Early looks happen at MIN_EARLY_ROUNDS .. (rounds the exact interval needs - 1);
    they share the error budget equally (Bonferroni), so stopping at any of them keeps
    the chance of a wrong call at most ``1 - confidence`` under the t model.
    """
    looks = max(1, min_rounds_for(confidence) - MIN_EARLY_ROUNDS)
    return 1.0 - (1.0 - confidence) / looks, looks


def _sign_test_p(pos: int, neg: int) -> float:
    """Exact two-sided sign test; zero deltas are ties and are dropped."""
    m = pos + neg
    if m == 0:
        return 1.0
    x = max(pos, neg)
    return min(1.0, 2.0 * (1.0 - _binom_half_cdf(m, x - 1)))


def _spread_pct(values: Sequence[float]) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    med = _median(s)
    return (s[-1] - s[0]) / med * 100.0 if med > 0 else math.nan


def _positive_finite(x: object) -> float | None:
    if isinstance(x, bool):
        return None
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def _check_confidence(confidence: float) -> None:
    if not (isinstance(confidence, (int, float)) and 0.0 < confidence < 1.0):
        raise BadInputError(
            f"confidence {confidence!r} is not between 0 and 1; pass e.g. 0.95")


def _check_threshold(threshold_pct: float) -> None:
    if not (isinstance(threshold_pct, (int, float)) and math.isfinite(threshold_pct)
            and threshold_pct >= 0):
        raise BadInputError(
            f"threshold {threshold_pct!r}% is not a finite number >= 0; pass e.g. --threshold 1")


def _check_lengths(a: Sequence[float], b: Sequence[float]) -> None:
    if len(a) != len(b):
        raise BadInputError(
            f"side A has {len(a)} rounds and side B {len(b)}; pass the two sides of the same rounds")


def _json_float(x: float | None) -> float | None:
    # JSON has no NaN/Infinity: undefined values travel as null.
    if x is None or not math.isfinite(x):
        return None
    return float(x)


# --------------------------------------------------------------------------- per shape


def paired_deltas(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """Per-round deltas in percent, ``(A_i / B_i - 1) * 100``; positive = B faster.

    Strict: a latency that is not a positive finite number raises BadInputError, so
    the i-th delta is always round i. :func:`shape_stats` is the lenient entry point
    (it skips such rounds and says so).
    """
    _check_lengths(a, b)
    out = []
    for i, (x, y) in enumerate(zip(a, b), start=1):
        xa, yb = _positive_finite(x), _positive_finite(y)
        if xa is None or yb is None:
            bad = ("A", x) if xa is None else ("B", y)
            raise BadInputError(
                f"round {i}: {bad[0]} latency {bad[1]!r} is not a positive finite number; "
                "drop that round or re-measure it")
        out.append((xa / yb - 1.0) * 100.0)
    return out


@attrs.frozen(kw_only=True)
class ShapeStats:
    """Everything zl says about one shape of one operator over a campaign's rounds."""

    n: int  # paired rounds used (after skipping unusable ones)
    deltas: tuple[float, ...]  # in round order
    median_delta_pct: float
    ci_low_pct: float
    ci_high_pct: float
    ci_method: str
    ci_level: float  # coverage the chosen order statistics attain (e.g. 0.96875 at n=6)
    min_delta_pct: float
    max_delta_pct: float
    sign_agree: int  # rounds with the median's sign
    sign_p: float  # exact two-sided sign test
    sign_held: bool  # every round strictly the same sign
    a_spread_pct: float  # (max - min) / median * 100 of side A's latencies
    b_spread_pct: float
    mde_pct: float  # smallest shift this campaign would call, either way (inf: none)
    threshold_pct: float
    verdict: str  # FASTER | SLOWER | NO_CHANGE | INCONCLUSIVE
    confidence: float = 0.95  # nominal level asked for
    ci_rank: int = 0  # k of [d_(k), d_(n-k+1)]; 0 = the requested level is out of reach
    notes: tuple[str, ...] = ()  # skipped rounds and why the verdict is what it is

    def to_json(self) -> dict:
        out: dict = {}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if isinstance(value, float):
                value = _json_float(value)
            elif isinstance(value, tuple):
                value = [_json_float(v) if isinstance(v, float) else v for v in value]
            out[field.name] = value
        return out


def shape_stats(a: Sequence[float], b: Sequence[float], *, threshold_pct: float = 1.0,
                confidence: float = 0.95, early_look: bool = False) -> ShapeStats:
    """Statistics and verdict of one shape from its per-round latencies (same units).

    ``early_look`` (adaptive campaigns only): with fewer rounds than the exact interval
    needs (6 at 95%), but at least MIN_EARLY_ROUNDS, the interval is a Student-t
    interval of the mean delta at the per-look level of :func:`early_look_level`. It
    assumes roughly normal deltas, so fixed-round campaigns never use it.

    ``a[i]`` and ``b[i]`` must come from the same round. A round where either side is
    not a positive finite number (0, negative, NaN, inf, None) is skipped with a note;
    unequal lengths raise BadInputError because the pairing itself is broken.
    """
    _check_threshold(threshold_pct)
    _check_confidence(confidence)
    _check_lengths(a, b)
    notes: list[str] = []
    a_used: list[float] = []
    b_used: list[float] = []
    for i, (x, y) in enumerate(zip(a, b), start=1):
        xa, yb = _positive_finite(x), _positive_finite(y)
        if xa is None or yb is None:
            side, raw = ("A", x) if xa is None else ("B", y)
            notes.append(f"round {i} skipped: {side} latency {raw!r} is not a positive finite number")
            continue
        a_used.append(xa)
        b_used.append(yb)
    deltas = [(x / y - 1.0) * 100.0 for x, y in zip(a_used, b_used)]
    n = len(deltas)
    s = sorted(deltas)
    med = _median(s)
    thr = float(threshold_pct)

    k, coverage = order_statistic_rank(n, confidence)
    method = CI_METHOD
    early = early_look and k == 0 and n >= MIN_EARLY_ROUNDS
    if n == 0:
        lo = hi = math.nan
    elif early:
        level, looks = early_look_level(confidence)
        mean = sum(deltas) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in deltas) / (n - 1))
        half = student_t_quantile((1.0 + level) / 2.0, n - 1) * sd / math.sqrt(n)
        lo, hi, coverage = mean - half, mean + half, level
        method = f"{EARLY_CI_METHOD}, mean delta, {looks} looks share {1 - confidence:.0%}"
    elif k == 0:
        lo, hi = s[0], s[-1]  # widest interval n allows; below the requested level
    else:
        lo, hi = s[k - 1], s[n - k]

    pos = sum(1 for d in deltas if d > 0)
    neg = sum(1 for d in deltas if d < 0)
    if med > 0:
        agree = pos
    elif med < 0:
        agree = neg
    else:
        agree = max(pos, neg)  # median exactly 0 (or n = 0): count the majority sign
    held = n > 0 and (pos == n or neg == n)

    if early:
        # Same shift model around the t interval: its half-width stays, the mean moves.
        half = (hi - lo) / 2.0
        mean = (hi + lo) / 2.0
        mde = max(thr + half, mean - s[0], s[-1] - mean)
    elif k == 0:
        mde = math.inf
    else:
        # Shift model: the same deltas around a true median E. FASTER needs
        # E + (d_(k) - med) > thr and every round > 0; SLOWER mirrors it.
        e_faster = max(thr + (med - lo), med - s[0])
        e_slower = max(thr + (hi - med), s[-1] - med)
        mde = max(e_faster, e_slower)

    verdict = INCONCLUSIVE
    if n == 0:
        notes.append("no usable rounds")
    elif k == 0 and not early:
        need = min_rounds_for(confidence)
        notes.append(f"{n} round(s) reach at most {coverage:.1%} coverage; "
                     f"{confidence:.0%} needs >= {need} rounds")
    elif lo > thr or hi < -thr:
        if held:
            verdict = FASTER if lo > thr else SLOWER
        else:
            notes.append(f"interval excludes the threshold but rounds disagree in sign "
                         f"({agree}/{n} agree); sign-flipping shapes are never called")
    elif -thr <= lo and hi <= thr:
        verdict = NO_CHANGE
    else:
        notes.append(f"interval [{lo:+.3g}%, {hi:+.3g}%] straddles the +/-{thr:g}% threshold")

    return ShapeStats(
        n=n, deltas=tuple(deltas), median_delta_pct=med, ci_low_pct=lo, ci_high_pct=hi,
        ci_method=method, ci_level=coverage,
        min_delta_pct=s[0] if n else math.nan, max_delta_pct=s[-1] if n else math.nan,
        sign_agree=agree, sign_p=_sign_test_p(pos, neg), sign_held=held,
        a_spread_pct=_spread_pct(a_used), b_spread_pct=_spread_pct(b_used),
        mde_pct=mde, threshold_pct=thr, verdict=verdict, confidence=float(confidence),
        ci_rank=k, notes=tuple(notes),
    )


def is_decided(stats: ShapeStats) -> bool:
    """A shape is decided once it has a verdict other than INCONCLUSIVE."""
    return stats.verdict != INCONCLUSIVE


# --------------------------------------------------------------------------- per operator


@attrs.frozen(kw_only=True)
class OperatorVerdict:
    verdict: str  # FASTER | SLOWER | MIXED | NO_CHANGE | INCONCLUSIVE
    counts: dict[str, int]  # shape verdict -> number of shapes (all four keys)
    n_shapes: int
    median_of_medians_pct: float | None
    range_of_round_medians: tuple[float, float] | None
    sign_changed_shapes: int  # shapes whose rounds did not all agree in sign
    text: str  # e.g. "SLOWER (5/6 shapes SLOWER, 1 INCONCLUSIVE)"

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict, "counts": dict(self.counts), "n_shapes": self.n_shapes,
            "median_of_medians_pct": _json_float(self.median_of_medians_pct),
            "range_of_round_medians": (list(self.range_of_round_medians)
                                       if self.range_of_round_medians else None),
            "sign_changed_shapes": self.sign_changed_shapes, "text": self.text,
        }


def operator_verdict(shapes: Sequence[ShapeStats],
                     round_median_deltas: Sequence[float] = ()) -> OperatorVerdict:
    """Operator verdict from its shapes' verdicts, stated with counts.

    FASTER (SLOWER) when at least one shape is FASTER (SLOWER) and none goes the other
    way; MIXED when both occur; NO_CHANGE only when every shape is NO_CHANGE;
    INCONCLUSIVE otherwise. ``round_median_deltas`` (per round, the median delta over
    the operator's shapes, computed by the caller) only feeds the printed range.
    """
    counts = {v: 0 for v in SHAPE_VERDICTS}
    for st in shapes:
        counts[st.verdict] = counts.get(st.verdict, 0) + 1
    n = len(shapes)
    faster, slower = counts[FASTER], counts[SLOWER]
    if n == 0:
        verdict = INCONCLUSIVE
    elif faster and slower:
        verdict = MIXED
    elif faster:
        verdict = FASTER
    elif slower:
        verdict = SLOWER
    elif counts[NO_CHANGE] == n:
        verdict = NO_CHANGE
    else:
        verdict = INCONCLUSIVE

    if n == 0:
        text = f"{verdict} (no shapes)"
    else:
        lead = FASTER if verdict == MIXED else verdict
        rest = [f"{counts[v]} {v}" for v in SHAPE_VERDICTS if v != lead and counts.get(v)]
        rest += [f"{c} {v}" for v, c in counts.items() if v not in SHAPE_VERDICTS and c]
        text = f"{verdict} ({counts[lead]}/{n} shapes {lead}" + "".join(f", {r}" for r in rest) + ")"

    medians = sorted(st.median_delta_pct for st in shapes if st.n > 0)
    rounds = [float(x) for x in round_median_deltas if x is not None and math.isfinite(x)]
    return OperatorVerdict(
        verdict=verdict, counts=counts, n_shapes=n,
        median_of_medians_pct=_median(medians) if medians else None,
        range_of_round_medians=(min(rounds), max(rounds)) if rounds else None,
        sign_changed_shapes=sum(1 for st in shapes if st.n > 0 and not st.sign_held),
        text=text,
    )


def should_stop(shapes: Sequence[ShapeStats], rounds_done: int, min_rounds: int,
                max_rounds: int) -> tuple[bool, str]:
    """Adaptive rounds: stop once every shape is decided (and ``min_rounds`` are done)
    or the budget of ``max_rounds`` is spent. Returns (stop, reason)."""
    if min_rounds < 1 or max_rounds < min_rounds:
        raise BadInputError(
            f"rounds budget min={min_rounds} max={max_rounds} is unusable; "
            "pass 1 <= min_rounds <= max_rounds")
    undecided = sum(1 for st in shapes if not is_decided(st))
    total = len(shapes)
    if rounds_done >= max_rounds:
        return True, (f"budget spent: {rounds_done}/{max_rounds} rounds, "
                      f"{undecided}/{total} shapes undecided")
    if total == 0:
        return True, f"no shapes measured after {rounds_done} round(s); more rounds cannot decide"
    if rounds_done < min_rounds:
        return False, f"{rounds_done}/{min_rounds} minimum rounds done"
    if undecided == 0:
        return True, f"all {total} shapes decided after {rounds_done} rounds"
    return False, (f"{undecided}/{total} shapes undecided after {rounds_done} "
                   f"of at most {max_rounds} rounds")


def false_positive_rate(control_shapes: Sequence[ShapeStats]) -> tuple[int, int, float]:
    """(called FASTER/SLOWER, total, rate) over shapes where no effect exists (A/A
    campaigns, control operators). Rate is NaN when there are no shapes."""
    total = len(control_shapes)
    called = sum(1 for st in control_shapes if st.verdict in (FASTER, SLOWER))
    return called, total, (called / total if total else math.nan)
