"""What an A/B campaign will cost: its cells from this host's history, its lanes simulated.

A median cell times the number of cells misses both things that decide an A/B campaign's
wall. Round 1 is heavier than the rest (side A sweeps and records the configs, each side
compiles into the compile cache later rounds load, ``--timing once`` times the
reference), so each planned cell is costed from earlier cells of the same operator,
side and round class (round 1, or a later round). And a pipeline (``--pipeline N``)
overlaps one cell's start, imports and collection with another cell's hold of the
device's timing gate, but an operator's cells run one after another, so a lane can only
overlap other operators' cells: a campaign of few operators drains. The lanes are
simulated as :mod:`zl_core.campaigns.lanes` runs them: operators longest first, each to
the first lane free, every cell's setup on its own, every hold one at a time per device.

Checked against the packed campaigns of docs/validation/2026-12-08-ab-once.md: from each
campaign's own cells the simulation gives 321.9 s for the pipelined one (measured
323.9 s) and 642.2 s for the serial one (643.5 s)
(docs/validation/scripts/ab_plan_check.py).
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Mapping, Sequence

import attrs

from zl_core.interface import occupancy, phases, timing_gate
from zl_core.store.layout import REPICK, RETUNED

from .checks import CONTROL
from .estimate import Estimate, OpEstimate, dominant_phase

#: What a pipelined cell does before it asks for the gate, in a cell that ran serially.
SETUP_PHASES = (phases.PREFLIGHT, phases.START, phases.COLLECTION)
#: A planned cell: (round number, side); round 0 stands for the accuracy-test cells.
Slot = tuple[int, str]
_ENDS, _ASKS = 0, 1  # simulation events; at one moment a lane's end goes before an ask


@attrs.frozen
class CellCost:
    """One cell as a lane pays it: ``setup_s`` overlaps other cells (start, imports,
    collection), ``hold_s`` holds the device (a pipelined cell's gate, to its exit or,
    ``--gate-release tests``, to its tests' end), of which ``timing_s`` the device timed
    (no cell's timing overlaps another's); ``tail_s``, a released cell's teardown after
    its hold, overlaps other cells' holds."""

    setup_s: float
    hold_s: float
    timing_s: float = 0.0
    tail_s: float = 0.0

    @property
    def wall_s(self) -> float:
        return self.setup_s + self.hold_s + self.tail_s


def cell_cost(record: Mapping) -> CellCost:
    """A finished cell's record (its assembled phases) as setup, hold and tail; its wait at
    a pipelined device's gate is none of them (another cell's hold, which the simulation adds)."""
    setup, hold, tail = _parts(record)
    return CellCost(setup_s=setup, hold_s=hold, timing_s=min(hold, _timed(record)), tail_s=tail)


def _timed(record: Mapping) -> float:
    """Seconds the cell's device timed: its own record of them, else its timing phases."""
    busy = record.get(occupancy.KEY)
    if isinstance(busy, Mapping) and isinstance(busy.get("seconds"), (int, float)):
        return float(busy["seconds"])
    seconds = record.get("seconds") or {}
    return sum(float(seconds.get(name) or 0.0) for name in phases.DEVICE_PHASES)


def _parts(record: Mapping) -> tuple[float, float, float]:
    wall = float(record["wall_s"])
    gate = record.get(timing_gate.KEY)
    if isinstance(gate, Mapping) and gate.get("held"):
        holds = [h for h in gate["held"] if isinstance(h, Sequence) and len(h) == 2]
        hold = sum(float(end) - float(start) for start, end in holds)
        exit_seen = gate.get("exit_seen")
        if gate.get("until_exit") and isinstance(exit_seen, (int, float)) and holds:
            hold += max(0.0, float(exit_seen) - float(holds[-1][1]))  # held until the exit
        waited = gate.get("waited_s")
        rest = max(0.0, wall - hold - (float(waited) if isinstance(waited, (int, float)) else 0.0))
        window = (record.get(occupancy.KEY) or {}).get("window")
        tail = 0.0
        if not gate.get("until_exit") and holds and isinstance(window, Sequence) and len(window) == 2:
            tail = min(rest, max(0.0, float(window[1]) - float(holds[-1][1])))  # released, then torn down
        return rest - tail, min(hold, wall), tail
    seconds = record.get("seconds") or {}
    setup = sum(float(seconds.get(name) or 0.0) for name in SETUP_PHASES)
    setup = min(max(0.0, setup), wall)
    return setup, wall - setup, 0.0


def planned_slots(rounds: int, *, retuned: bool, control: bool, checks: bool) -> list[Slot]:
    """The cells of one operator in the order its task runs them (:mod:`.ab_task`)."""
    slots: list[Slot] = []
    for round_no in range(1, rounds + 1):
        slots += [(round_no, "A"), (round_no, "B")] + ([(round_no, RETUNED)] if retuned else [])
        if round_no == 1:
            slots += [(1, CONTROL)] if control else []
            slots += [(1, REPICK)] if retuned else []
    return slots + ([(0, "A"), (0, "B")] if checks else [])


def op_cells(records: Sequence[Mapping], slots: Sequence[Slot]) -> list[CellCost] | None:
    """Each planned cell at the median of the operator's earlier cells most like it: the
    same side and round class (1, or later), else the same round class, else any; an
    accuracy-test cell (round 0) as a later round of its side. None: no cell seen."""
    if not records:
        return None
    costs = [(int(r.get("round") or 2), str(r.get("side") or ""), cell_cost(r)) for r in records]

    def median(pool: list[CellCost]) -> CellCost:
        return CellCost(setup_s=statistics.median(c.setup_s for c in pool),
                        hold_s=statistics.median(c.hold_s for c in pool),
                        timing_s=statistics.median(c.timing_s for c in pool),
                        tail_s=statistics.median(c.tail_s for c in pool))

    out = []
    for round_no, side in slots:
        first = round_no == 1
        pool = ([c for r, s, c in costs if (r == 1) == first and s == side]
                or [c for r, _s, c in costs if (r == 1) == first]
                or [c for *_, c in costs])
        out.append(median(pool))
    return out


def typical(cells_by_op: Sequence[list[CellCost]]) -> list[CellCost]:
    """An operator never seen here: each planned cell at the median over the seen ones."""
    return [CellCost(setup_s=statistics.median(cells[i].setup_s for cells in cells_by_op),
                     hold_s=statistics.median(cells[i].hold_s for cells in cells_by_op),
                     timing_s=statistics.median(cells[i].timing_s for cells in cells_by_op),
                     tail_s=statistics.median(cells[i].tail_s for cells in cells_by_op))
            for i in range(len(cells_by_op[0]))]


def campaign_like(seen: Mapping[str, Mapping[str, list[Mapping]]], ops: int,
                  slots: Sequence[Slot]) -> list[list[CellCost]]:
    """A campaign of ``ops`` operators like those of ``seen`` (history's records): the
    measured operators in turn, each planned cell from that operator's own cells; how the
    benchmarks scale a measured campaign to an inventory."""
    measured = [cells for by_side in seen.values()
                if (cells := op_cells([r for side in by_side.values() for r in side], slots))]
    return [measured[i % len(measured)] for i in range(ops)] if measured else []


def simulate(tasks: Sequence[Sequence[CellCost]], *, devices: int, depth: int,
             early: tuple[int, int] | None = None) -> float:
    """When the last cell ends: ``devices`` devices of ``depth`` lanes each take the
    operators longest first, each to the lane that frees first; a lane runs its
    operator's cells one after another; at ``depth`` 1 a cell costs its wall, deeper
    each cell sets up on its own and then waits for its device's gate, which one
    cell holds at a time, first come first served. ``early`` (first, last): the cells of
    an operator with those indexes start as the cell before them takes the gate and ask
    for it once that one ended (:mod:`zl_core.campaigns.prefetch`)."""
    order = sorted(tasks, key=lambda cells: -sum(c.wall_s for c in cells))
    if not order:
        return 0.0
    lanes = [d for d in range(max(1, devices)) for _slot in range(max(1, depth))]
    gate_free = [0.0] * max(1, devices)
    # (time, kind, lane, task, cell): kind ASKS, the cell's setup is over and it wants the
    # device (serial: its hold starts); kind ENDS, the cell is over and its lane goes on.
    events: list[tuple[float, int, int, int, int]] = []
    waiting = list(range(len(order)))
    end = 0.0
    for lane in range(len(lanes)):
        if waiting:
            heapq.heappush(events, (order[waiting[0]][0].setup_s, _ASKS, lane, waiting.pop(0), 0))
    started: set[tuple[int, int]] = set()  # (task, cell) started before its predecessor ended

    def starts_early(task: int, cell: int) -> bool:
        return (depth > 1 and early is not None and early[0] <= cell <= early[1]
                and cell < len(order[task]))

    while events:
        now, kind, lane, task, cell = heapq.heappop(events)
        if kind == _ASKS:
            hold = order[task][cell].hold_s
            tail = order[task][cell].tail_s
            if depth > 1:  # one hold at a time per device, in the order they asked
                taken = max(now, gate_free[lanes[lane]])
                gate_free[lanes[lane]] = taken + hold
                ended = gate_free[lanes[lane]] + tail  # a released cell tears down after its hold
                heapq.heappush(events, (ended, _ENDS, lane, task, cell))
                if starts_early(task, cell + 1):  # it sets up beside this cell, asks once it ended
                    started.add((task, cell + 1))
                    heapq.heappush(events, (max(taken + order[task][cell + 1].setup_s, ended),
                                            _ASKS, lane, task, cell + 1))
            else:
                heapq.heappush(events, (now + hold + tail, _ENDS, lane, task, cell))
            continue
        end = max(end, now)
        if (task, cell + 1) in started:
            continue  # the lane's next cell is on its way already
        if cell + 1 < len(order[task]):
            task, cell = task, cell + 1
        elif waiting:
            task, cell = waiting.pop(0), 0
        else:
            continue
        heapq.heappush(events, (now + order[task][cell].setup_s, _ASKS, lane, task, cell))
    return end


def early_cells(slots: Sequence[Slot]) -> tuple[int, int] | None:
    """The indexes of the planned cells that may start early (:mod:`.prefetch`): those of
    rounds 2 on, not the accuracy tests after them."""
    later = [i for i, (round_no, _side) in enumerate(slots) if round_no >= 2]
    return (later[0], later[-1]) if later else None


def ab_estimate(ops: Sequence[str], seen: Mapping[str, Mapping[str, list[Mapping]]],
                slots: Sequence[Slot], *, devices: int, depth: int, campaigns_read: int,
                early: bool = False) -> Estimate:
    """Every operator's planned cells costed from ``seen`` (history's records, each with its
    ``round`` and ``side``), the campaign's wall simulated over the lanes; ``early``: a
    pipelined operator's later cells start while the cell before them holds the gate."""
    cells: dict[str, list[CellCost] | None] = {}
    rows = []
    for op in ops:
        records = [r for side in (seen.get(op) or {}).values() for r in side]
        cells[op] = op_cells(records, slots)
        own = cells[op]
        rows.append(OpEstimate(op=op, seconds=None if own is None else sum(c.wall_s for c in own),
                               cells_seen=len(records), dominant_phase=dominant_phase(records)))
    known = [c for c in cells.values() if c is not None]
    if not known:
        return Estimate(ops=tuple(rows), assumed_s=None, total_s=None, lanes=devices,
                        makespan_s=None, campaigns_read=campaigns_read)
    assumed = typical(known)
    tasks = [c if c is not None else assumed for c in cells.values()]
    return Estimate(ops=tuple(rows), assumed_s=sum(c.wall_s for c in assumed),
                    total_s=sum(c.wall_s for cells_ in tasks for c in cells_), lanes=devices,
                    makespan_s=simulate(tasks, devices=devices, depth=depth,
                                        early=early_cells(slots) if early else None),
                    campaigns_read=campaigns_read,
                    timing_s=sum(c.timing_s for cells_ in tasks for c in cells_))
