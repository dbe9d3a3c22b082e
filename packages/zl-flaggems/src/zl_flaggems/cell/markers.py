"""Marker lines this package's plugins print, and how many of each.

A marker is one line starting with its name, then ``key=value`` fields, the
free-text field last (``error=`` may contain spaces). Core counts them in
run.log; the names are :mod:`zl_core.interface.contract`'s; the counts kept here go into results.json (the autotune plugin keeps
its own count of ``AUTOTUNE_REPLAY_FALLBACK``; the results plugin adds both).
"""

from __future__ import annotations

import sys
from collections import Counter

from zl_core.interface import contract

DIRECT_NO_CUDAGRAPH = contract.BENCHMARK_DIRECT_NO_CUDAGRAPH
CAPTURE_POISONED = contract.BENCHMARK_CAPTURE_POISONED
FOREIGN_VENDOR_MODULE = contract.FOREIGN_VENDOR_MODULE
AUTOTUNE_REPLAY_FALLBACK = contract.AUTOTUNE_REPLAY_FALLBACK
ALL = contract.MARKERS

_COUNTS: Counter[str] = Counter()


def format_line(marker: str, fields: list[tuple[str, object]]) -> str:
    parts = [marker]
    for key, value in fields:
        text = " ".join(str(value).split()) or "-"
        parts.append(f"{key}={text}")
    return " ".join(parts)


def emit(marker: str, *fields: tuple[str, object]) -> str:
    """Print one marker line on stdout (flushed) and count it; returns the line."""
    line = format_line(marker, list(fields))
    _COUNTS[marker] += 1
    from zl_flaggems.cell.cellenv import line_start

    line_start()
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return line


def counts() -> dict[str, int]:
    return {name: _COUNTS.get(name, 0) for name in ALL}


def reset() -> None:
    _COUNTS.clear()
