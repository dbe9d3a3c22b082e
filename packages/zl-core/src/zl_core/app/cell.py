"""``zl run`` as a function: one cell, its run directory, and what it measured."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs

from zl_core.cells import sweep_shards
from zl_core.cells.cell import CellOutcome, run_cell
from zl_core.foundation.errors import PreflightError, UsageError
from zl_core.foundation.stamps import folder_stamp
from zl_core.interface.opspec import OpSpec, check_dtypes, check_name
from zl_core.interface.sources import Sources
from zl_core.plugins.host import PluginHost
from zl_core.store.layout import op_folder

from .inputs import check_dtypes_offered, runs_root
from .options import Measurement, Where
from .resolve import cell_settings, resolve


@attrs.frozen(kw_only=True)
class CellOptions:
    """What ``zl run`` is asked for: the operator as ``[source:]op[@file][:op_file[:dtypes]]``
    (``op_file``/``dtypes`` override its parts), where and how it runs, and how its
    autotune configs are pinned (``replay_from`` a recorded cell, ``no_record``: neither)."""

    op: str
    op_file: str | None = None
    dtypes: tuple[str, ...] = ()
    test_node: str | None = None
    where: Where
    measure: Measurement
    replay_from: Path | None = None
    no_record: bool = False
    out: Path | None = None
    runs_root: Path | None = None
    env: tuple[tuple[str, str], ...] = ()


@attrs.frozen(kw_only=True)
class CellRun:
    """The cell that ran (``outcome``), or the preflight that refused it (``refused``)."""

    op: str
    backend: str
    device: str | None
    outcome: CellOutcome | None = None
    refused: PreflightError | None = None


def _op(options: CellOptions, sources: Sources | None = None) -> OpSpec:
    sources = sources or Sources()
    spec = OpSpec.parse(options.op, prefixes=sources.prefixes, default_source=sources.default_name)
    if options.op_file:
        spec = attrs.evolve(spec, op_file=check_name("op file", options.op_file))
    if options.dtypes:
        spec = attrs.evolve(spec, dtypes=check_dtypes(list(options.dtypes)))
    return spec


def run_one_cell(host: PluginHost, options: CellOptions, *,
                 echo: Callable[..., None] | None = None,
                 say: Callable[..., None] | None = None) -> CellRun:
    """Run one cell with the same settings as a campaign's (compile-only: nothing tuned to
    pin); ``echo`` gets the cell's output as it runs, ``say`` the sweep shards' progress."""
    op = _op(options)  # malformed names fail before any probing
    got = resolve(host, options.where, options.measure, what=f"zl run --op {op.op}")
    op = _op(options, got.sources)  # a source prefix is known once the sources are
    provider, backend, device = got.provider, got.backend, got.device
    if not options.test_node:  # a dtype the suite would refuse: exit 2, before the cell
        check_dtypes_offered(provider, got.sources.path(op.source), op)
    if options.replay_from and options.no_record:
        raise UsageError("--replay-from and --no-record exclude each other")
    mode = "replay" if options.replay_from else ("uncontrolled" if options.no_record else "record")
    stamp = folder_stamp()
    out = options.out or runs_root(options.runs_root) / f"run_{op_folder(op.op)}_{stamp}"
    request = cell_settings(got.measure, got.sources).request(
        op=op, backend=backend, device=device, out_dir=Path(out).resolve(), env=dict(options.env),
        side="", autotune_mode=mode, replay_from=options.replay_from, test_node=options.test_node)
    ran = CellRun(op=op.op, backend=backend.name, device=device)
    try:
        if sweep_shards.wanted(request):
            outcome = sweep_shards.run_sharded(host, provider, request, say=say or (lambda *a: None),
                                               run=lambda req: run_cell(host, provider, req, echo=echo))
        else:
            outcome = run_cell(host, provider, request, echo=echo)
    except PreflightError as exc:
        return attrs.evolve(ran, refused=exc)
    return attrs.evolve(ran, outcome=outcome)
