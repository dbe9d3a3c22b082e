"""The order each round runs its two processes, and why it is counterbalanced.

The judgement estimates a per-round order term (how much running first moves a
side) and removes it, so a constant first-process penalty costs no bias. A penalty
that changes over a campaign is another matter: the effect estimate absorbs
``mean(s_r * d_r)``, where ``s_r`` is +1 when A ran first and ``d_r`` the penalty in
round r. Alternating order (AB, BA, AB, ...) leaves a linear trend in ``d_r`` in
that sum; counterbalanced order (AB, BA, BA, AB, repeated) cancels a linear trend
over every four rounds and a constant over every two. docs/statistics.md shows the
simulations (slow drift: 2.7% false calls beyond the threshold alternating, 2.4%
counterbalanced, where 2.5% is allowed).
"""

from __future__ import annotations

from collections.abc import Iterable

from zl_core.foundation.errors import BadInputError

#: A first in odd rounds, B first in even ones: campaigns that record no order ran so.
ALTERNATING = "alternating"
#: AB, BA, BA, AB, then again: what ``zl ab`` runs today.
COUNTERBALANCED = "counterbalanced"
ROUND_ORDERS = (ALTERNATING, COUNTERBALANCED)

#: The order of each round's two processes, as ``round_order`` gives it: +1 when A ran first.
ORDERS = {"AB": 1, "BA": -1}


def check_round_order(name: object) -> str:
    if name not in ROUND_ORDERS:
        raise BadInputError(f"round order {name!r} is not one of {', '.join(ROUND_ORDERS)}")
    return str(name)


def a_first(scheme: str, round_no: int) -> bool:
    """Whether side A runs first in round ``round_no`` (1-based) under ``scheme``."""
    check_round_order(scheme)
    if scheme == ALTERNATING:
        return round_no % 2 == 1
    return round_no % 4 in (0, 1)


def round_order(scheme: str, rounds: Iterable[int]) -> dict[int, str]:
    """``{round: "AB" or "BA"}`` for ``rounds`` under ``scheme``."""
    return {r: "AB" if a_first(scheme, r) else "BA" for r in rounds}


def alternating_order(rounds: Iterable[int]) -> dict[int, str]:
    """The order campaigns ran before counterbalancing: A first in odd rounds."""
    return round_order(ALTERNATING, rounds)
