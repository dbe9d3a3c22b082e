"""``zl ab --plan``: what an A/B campaign would run and cost, before any cell runs.

The operators are those ``zl ab`` would take (``--ops``, else the screen's IR_CHANGED ones,
plus ``--controls``); each costs its planned cells (both sides of every planned round, side
R's and side A's second record with ``--retuned``, a control side's cell, accuracy tests) at the median of its finished A/B cells on this host
(:mod:`zl_core.campaigns.estimate`). With ``--pipeline N`` a lane is bound by what its
cells cannot overlap: a cell costs its time outside interpreter start, imports and
collection (the part a pipeline overlaps with another cell's time on the device), at
least its wall divided by N; a cell that ran pipelined costs its hold of the timing gate.
Nothing is run or written.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from zl_core.campaigns.estimate import Estimate, estimate, history
from zl_core.campaigns.judging import MIN_LOOK_ROUNDS
from zl_core.interface import phases, timing_gate
from zl_core.plugins.host import PluginHost

from . import lanes
from .commands import read_screen_input, where_from_screen
from .inputs import runs_root
from .lanes import resolve_devices
from .options import AbOptions
from .resolve import resolve

#: What a pipeline overlaps with another cell's time on the device (zl_core.interface.timing_gate).
OVERLAPPED = (phases.START, phases.COLLECTION)


@attrs.frozen(kw_only=True)
class AbPlan:
    ops: tuple[str, ...]
    controls: tuple[str, ...]
    screen: Path | None  # where the operators came from (None: --ops)
    rounds: int  # planned rounds (an adaptive plan's first look)
    adaptive: bool
    cells_per_op: int
    retuned: bool
    pipeline: int
    estimate: Estimate


def ab_plan(host: PluginHost, options: AbOptions) -> AbPlan:
    options, _resume = lanes.checked(options, "ab")
    root = runs_root(options.runs_root)
    source = read_screen_input(options.screen, root) if not options.ops or options.controls else None
    from_screen = source if source is not None and not options.ops else None
    where = where_from_screen(host, options.where, from_screen.meta) if from_screen else options.where
    # The suite and operators as zl ab resolves them (an unknown operator is refused here too).
    got = resolve(host, where, options.measure, what="zl ab --plan",
                  local_device=lanes.needs_local_device(options.lanes), ir_only_without_device=True,
                  op_specs=options.ops if from_screen is None else None)
    ops = tuple(o.op for o in (from_screen.changed if from_screen else got.ops))
    controls = tuple(o.op for o in source.quiet[: max(0, options.controls)]) if source else ()
    rounds = options.rounds or MIN_LOOK_ROUNDS
    cells = ((3 * rounds + 1) if options.retuned else 2 * rounds) + (1 if options.control_env else 0) \
        + (2 if options.checks else 0)
    devices = (resolve_devices(host, got.backend, options.lanes.devices, what="zl ab --plan")
               if options.lanes.devices else None)
    seen, read = history(root, "ab", compile_only=False)
    depth = options.lanes.pipeline
    if depth > 1:
        seen = {op: {side: [lane_cost(r, depth) for r in records] for side, records in by_side.items()}
                for op, by_side in seen.items()}
    cost = estimate([*ops, *controls], seen, sides=cells, lanes=len(devices) if devices else 1,
                    campaigns_read=read)
    return AbPlan(ops=ops, controls=controls, screen=source.path if source else None, rounds=rounds,
                  adaptive=options.rounds is None, cells_per_op=cells, retuned=options.retuned,
                  pipeline=depth, estimate=cost)


def lane_cost(record: Mapping, depth: int) -> Mapping:
    """A cell's record with ``wall_s`` as a pipelined lane of ``depth`` pays it."""
    wall = float(record["wall_s"])
    gate = record.get(timing_gate.KEY)
    if isinstance(gate, Mapping) and gate.get("held"):
        held = sum(end - start for start, end in gate["held"])
        return {**record, "wall_s": held}
    seconds = record.get("seconds") or {}
    overlapped = sum(float(seconds.get(name) or 0.0) for name in OVERLAPPED)
    return {**record, "wall_s": max(wall - overlapped, wall / depth)}
