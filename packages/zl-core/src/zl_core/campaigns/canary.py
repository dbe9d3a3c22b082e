"""Canary operators: a long or frozen campaign runs one operator per lane first, and a
failed one stops the campaign before the rest of its plan is spent.

A broken interpreter, checkout or device fails every operator alike; found on the first
operator of each lane, it costs minutes, not the hours of a whole inventory (the seed's
sealed campaigns required a passing canary selection before the full one). The canaries
are the plan's own first operators, so nothing they measure is thrown away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zl_core.foundation.errors import CanaryFailedError
from zl_core.store.layout import CampaignLayout

from .executor import Task
from .kept_cells import failed_ops

#: ``--canary`` values: auto (long or frozen campaigns), on, off.
CHOICES = ("auto", "on", "off")
#: A campaign is long when it plans more than this many operators per lane.
LONG_PER_LANE = 4


def wanted(choice: str, *, tasks: int, lanes: int, resumed: bool) -> bool:
    """Whether the campaign runs canaries first: ``on`` (a frozen campaign's ``auto`` is
    ``on``: :func:`choice_for`), or ``auto`` for a long campaign; never when resumed (its
    canaries ran when it started) or when the whole plan is one operator per lane (the
    canaries would be the campaign)."""
    if choice == "off" or resumed or tasks <= lanes:
        return False
    return choice == "on" or tasks > LONG_PER_LANE * lanes


def choice_for(choice: str, *, frozen: bool) -> str:
    """``--canary`` as the engine takes it: ``auto`` means ``on`` for a frozen campaign."""
    return "on" if frozen and choice == "auto" else choice


def split(tasks: Sequence[Task], lanes: int) -> tuple[list[Task], list[Task]]:
    """(the canaries: the plan's first operator for each lane, the rest)."""
    count = max(1, lanes)
    return list(tasks[:count]), list(tasks[count:])


def plan(tasks: Sequence[Task], *, choice: str, lanes: int, resumed: bool,
         say: Callable[[str], None]) -> tuple[list[Task], list[Task]]:
    """(the canaries, the rest) of a campaign's plan, said when there are canaries;
    ([], tasks) when the campaign runs none (:func:`wanted`)."""
    if not wanted(choice, tasks=len(tasks), lanes=lanes, resumed=resumed):
        return [], list(tasks)
    first, rest = split(tasks, lanes)
    say(f"canary: {', '.join(t.op.op for t in first)} first, one per lane; a failure "
        f"stops the campaign before its other {len(rest)} operator(s)")
    return first, rest


def check(layout: CampaignLayout, canaries: Sequence[str], *, rest: int, command: str) -> None:
    """Raise CanaryFailedError (exit 6) when a canary operator failed (an error, a timeout,
    a preflight), naming it, the operators left unrun and the ways on."""
    failed = [op for op in failed_ops(layout) if op in set(canaries)]
    if not failed:
        return
    raise CanaryFailedError(
        f"canary operator(s) {', '.join(failed)} failed (see {failed[0]}/.../run.log), "
        f"so the other {rest} operator(s) were not run; fix the cause and start the campaign "
        f"again, or run the rest as it is with: {command} --resume {layout.root}")
