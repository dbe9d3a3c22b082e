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


#: A re-tuned campaign's rounds (``zl ab --retuned``): sides A, B and R, in the order each
#: round runs them, repeated every 12 rounds. A's order against B is the counterbalanced
#: one (AB, BA, BA, AB, ...), so the pinned comparison keeps its order; every pair of
#: sides runs in each order twice in rounds 1-4 (a look's minimum support), and each side
#: runs first in two of every six rounds, so over rounds 1-6, 1-12, ... a first-process
#: penalty falls on every side alike (``first_process_residual``; docs/statistics.md §3).
RETUNED_CYCLE = ("ABR", "BRA", "RBA", "ARB", "RAB", "BAR", "BAR", "ABR", "RAB", "BRA", "RBA", "ARB")


def retuned_sides(round_no: int) -> str:
    """The sides of round ``round_no`` (1-based) of a re-tuned campaign, in run order."""
    if round_no < 1:
        raise BadInputError(f"round {round_no} is not a round number (they start at 1)")
    return RETUNED_CYCLE[(round_no - 1) % len(RETUNED_CYCLE)]


def pair_order(first: str, second: str, rounds: Iterable[int]) -> dict[int, str]:
    """``{round: "AB" or "BA"}`` for the pair (``first``, ``second``) of a re-tuned
    campaign: "AB" where ``first`` ran before ``second``, as the judgement reads it."""
    out = {}
    for r in rounds:
        sides = retuned_sides(r)
        out[r] = "AB" if sides.index(first) < sides.index(second) else "BA"
    return out


def first_process_residual(first: str, second: str, rounds: int) -> float:
    """What is left, in units of the penalty, of a first-process penalty in the effect of
    ``first`` against ``second`` after ``rounds`` rounds of :data:`RETUNED_CYCLE`, once the
    judgement's order term (the mean of the two order groups' means) has removed its share.
    The penalty falls on the process that runs first in a round, whichever pair it is in."""
    groups: dict[str, list[float]] = {"AB": [], "BA": []}
    for r, order in pair_order(first, second, range(1, rounds + 1)).items():
        lead = retuned_sides(r)[0]
        groups[order].append((lead == first) - (lead == second))
    if not groups["AB"] or not groups["BA"]:
        raise BadInputError(f"{rounds} round(s) run {first} and {second} in one order only")
    return (sum(groups["AB"]) / len(groups["AB"]) + sum(groups["BA"]) / len(groups["BA"])) / 2
