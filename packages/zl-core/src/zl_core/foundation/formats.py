"""How zl writes a value for a person to read, one formatter per kind of value, so the
progress line, the plans, zl freeze and every report form say a duration alike."""

from __future__ import annotations


def duration(seconds: float | None) -> str:
    """Seconds as a reader takes them in: ``4.2 s``, ``42 s``, ``4.2 min``, ``4.2 h``;
    ``-`` for an unknown duration."""
    if seconds is None:
        return "-"
    seconds = float(seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
