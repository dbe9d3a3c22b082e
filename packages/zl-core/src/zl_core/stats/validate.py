"""Degenerate inputs: what the statistics refuse, what they skip, and the tie floor.

- A latency that is not a number at all (a string, a bool, an object) is a broken
  caller: BadInputError, naming the operator, shape, round and side.
- A number that cannot be a latency (None, NaN, 0, negative, infinite) is a missing
  measurement: that round is left out of that shape, with a note.
- A paired ratio A/B beyond float range cannot be two timings of one shape in one
  unit: BadInputError.
- Ties: latencies carry a printed resolution (0.0016 ms is known to 1e-4 ms). The
  rounding alone gives the log ratio a spread, so an interval is never narrower than
  that resolution allows, and equal rounds never give a zero-width decision.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

from zl_core.foundation.errors import BadInputError

# log(A/B) above this overflows the percent delta (expm1 of 709.8 is the float limit).
MAX_ABS_LOG_RATIO = 700.0
# Relative step of a float32: the finest resolution a latency can honestly claim.
FLOAT32_STEP = 2.0 ** -24


def latency(value: object, where: str) -> float | None:
    """A usable latency, or None for a missing one; BadInputError for a non-number."""
    if value is None:
        return None
    if type(value) is not float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise BadInputError(
            f"{where}: latency {value!r} is not a number; pass latencies as numbers "
            "(the same unit on both sides), or None for a missing round")
    v = float(value)
    return v if math.isfinite(v) and v > 0 else None


def log_ratio(a: float, b: float, where: str) -> float:
    """log(A/B) of one round, refusing ratios whose percent delta would overflow."""
    y = math.log(a) - math.log(b)
    if abs(y) > MAX_ABS_LOG_RATIO:
        raise BadInputError(
            f"{where}: A/B = {a!r}/{b!r} is beyond float range; these are not two timings "
            "of one shape in one unit (check the units of both sides)")
    return y


def decimal_step(x: float) -> float:
    """The unit of the last printed digit of ``x`` (0.0016 -> 1e-4, 1.05 -> 0.01, 1200.0 -> 100),
    never finer than single precision (GPU event timers report float32 milliseconds)."""
    text = repr(float(x))
    mantissa, _, exponent = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0")
    if frac:
        power = -len(frac)
    else:  # 1200.0 -> 100: trailing zeros of the whole part are not digits
        digits = whole.lstrip("-")
        power = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return max(10.0 ** (power + int(exponent or 0)), abs(x) * FLOAT32_STEP)


def tie_variance(pairs: Iterable[tuple[float, float]], step: float | None = None) -> float:
    """Variance of log(A/B) that rounding to the printed resolution alone gives one round.

    The resolution ``step`` defaults to the finest last digit seen on either side (one
    instrument prints both); a latency known to step q has a uniform rounding error of
    variance q^2 / 12, relative to its size.
    """
    pairs = list(pairs)
    if not pairs:
        return 0.0
    if step is None:
        step = min(decimal_step(v) for pair in pairs for v in pair)
    return sum((step / a) ** 2 / 12.0 + (step / b) ** 2 / 12.0 for a, b in pairs) / len(pairs)


def _real(value: object) -> float | None:
    """``value`` as a float when it is a real number (a bool is not), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def check_threshold(threshold_pct: object) -> float:
    value = _real(threshold_pct)
    if value is None or not math.isfinite(value) or not 0 <= value < 100:
        raise BadInputError(
            f"threshold {threshold_pct!r}% is not a number in [0, 100); pass e.g. --threshold 1")
    return value


def check_confidence(confidence: object) -> float:
    value = _real(confidence)
    if value is None or not 0.0 < value < 1.0:
        raise BadInputError(f"confidence {confidence!r} is not between 0 and 1; pass e.g. 0.95")
    return value


def check_rounds(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise BadInputError(f"{name} {value!r} is not a whole number >= {least}; "
                            f"a verdict needs at least {least} rounds")
    return int(value)
