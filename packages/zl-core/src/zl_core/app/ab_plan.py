"""``zl ab --plan``: what an A/B campaign would run and cost, before any cell runs.

The operators are those ``zl ab`` would take (``--ops``, else the screen's IR_CHANGED ones,
plus ``--controls``); each costs its planned cells (both sides of every planned round, side
R's and side A's second record with ``--retuned``, a control side's cell, accuracy tests),
each at the median of the operator's finished A/B cells on this host of the same side and
round class (round 1, or later); the campaign's wall simulates its lanes, a pipeline's
gate included (:mod:`zl_core.campaigns.ab_estimate`). Nothing is run or written.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from zl_core.campaigns import prefetch
from zl_core.campaigns.ab_estimate import ab_estimate, planned_slots
from zl_core.campaigns.estimate import Estimate, history
from zl_core.campaigns.judging import MIN_LOOK_ROUNDS
from zl_core.plugins.host import PluginHost

from . import lanes
from .commands import read_screen_input, where_from_screen
from .inputs import runs_root
from .lanes import resolve_devices
from .options import AbOptions
from .resolve import resolve


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
    slots = planned_slots(rounds, retuned=options.retuned, control=bool(options.control_env),
                          checks=bool(options.checks))
    devices = (resolve_devices(host, got.backend, options.lanes.devices, what="zl ab --plan")
               if options.lanes.devices else None)
    seen, read = history(root, "ab", compile_only=False)
    early = prefetch.applies(pipeline=options.lanes.pipeline, fixed_rounds=options.rounds is not None,
                             retuned=options.retuned)
    cost = ab_estimate([*ops, *controls], seen, slots, devices=len(devices) if devices else 1,
                       depth=options.lanes.pipeline, campaigns_read=read, early=early)
    return AbPlan(ops=ops, controls=controls, screen=source.path if source else None, rounds=rounds,
                  adaptive=options.rounds is None, cells_per_op=len(slots), retuned=options.retuned,
                  pipeline=options.lanes.pipeline, estimate=cost)
