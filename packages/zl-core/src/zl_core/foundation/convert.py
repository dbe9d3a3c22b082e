"""attrs converters with types a type checker reads.

``converter=tuple`` makes attrs' ``__init__`` take an unsolved ``Iterable[_T_co]``, so
every caller that passes a list is flagged; these name what each field takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def str_pairs(values: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(values)


def number_pairs(values: Iterable[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    return tuple(values)


def any_tuple(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(values)


def str_dict(values: Mapping[str, str]) -> dict[str, str]:
    return dict(values)


def object_dict(values: Mapping[str, object]) -> dict[str, object]:
    return dict(values)
