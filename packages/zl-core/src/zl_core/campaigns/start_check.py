"""Every cell of a campaign starts the same way: warm for all of them, or cold for all.

A warm start is refused for a cell whose environment differs from the zygote's in a
variable the warm imports read (:mod:`zl_core.cells.warmstart`). What differs between cells
of one campaign is the same for all its operators (their folders, caches, ops) and
per side (the switch), so one cell of each side, asked before any runs, answers for
the campaign. A refusal makes the whole campaign cold, and zl says why; the report
refuses a campaign that mixes the two anyway (``start`` is a caliber field).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs

from zl_core.cells import warmstart
from zl_core.cells.cell import cell_environment, compiler_spec
from zl_core.foundation.errors import PreflightError
from zl_core.plugins.host import PluginHost

from .settings import CellSettings, switch_vars
from .spec import CampaignSpec


def settle_start(host: PluginHost, spec: CampaignSpec, say: Callable[[str], None]) -> CellSettings:
    """``spec.settings``, made cold when a warm start cannot hold for every cell; its first
    operator to run (or control) answers for all."""
    settings, provider, sides = spec.settings, spec.provider, spec.sides
    op = next(iter([*(o for o in spec.ops if o.op not in spec.skipped), *spec.controls]), None)
    if settings.start != "warm" or op is None:
        return settings
    probe_root = Path(tempfile.gettempdir()) / "zl-start-probe"  # named, never created
    notes: list[str] = []
    for side in ("A", "B"):
        request = settings.request(op=op, backend=spec.backend, device=spec.device,
                                   out_dir=probe_root / side, env=sides.env(side), side=side,
                                   autotune_mode="record", replay_from=None,
                                   switch_vars=switch_vars(sides, tuple(n for n, _ in spec.control_env)))
        try:
            command = provider.cell_command(request, host)
        except PreflightError:
            return settings  # every cell fails its own preflight, saying why
        env = cell_environment(host, request, extra=dict(command.env), unset=command.unset,
                               compiler=compiler_spec(provider, request.backend))
        zygote, note = warmstart.for_cell(provider.warm_plan(request), provider.name, request.python,
                                          command.argv, env, request.env)
        if zygote is None:
            say(f"warm start off for this campaign (side {side}): {note}; every cell starts cold")
            return attrs.evolve(settings, start="cold")
        if note and note not in notes:
            notes.append(note)
    assert zygote is not None  # each side's loop returned where it had none
    imported = ", ".join(zygote.imported) or "nothing"
    missing = sorted(zygote.report.get("left_out") or {})
    say(f"warm start: each cell forks from an interpreter that imported {imported}"
        + "".join(f"; {note}, so the cells import it themselves" for note in notes)
        + (f"; not importable here, left to the cells: {', '.join(missing)}" if missing else ""))
    return settings
