"""``zl run``: one cell, its run directory, and what it measured."""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import datetime
from pathlib import Path

import attrs

from zl_core import contract, sweep_shards
from zl_core.app.resolve import cell_settings, resolve, runs_root
from zl_core.cell import run_cell
from zl_core.cli import _common
from zl_core.errors import PreflightError, UsageError
from zl_core.host import plugin_host
from zl_core.opspec import OpSpec, check_dtypes, check_name
from zl_core.sources import Sources
from zl_core.store.layout import op_folder

log = logging.getLogger(__name__)


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run one cell: one operator, one device, one side",
                       description="Run one measurement cell and write its run directory. The "
                       "cell's output is echoed on stderr as it runs (not with -q); the line "
                       "saying how it ended is printed on stdout.")
    p.add_argument("--op", required=True,
                   help="operator, [source:]op[@file][:op_file[:dtype,dtype...]] or a plain name")
    p.add_argument("--op-file", help="benchmark file stem (default: the op name)")
    p.add_argument("--test-node", help="explicit pytest node inside the suite, e.g. benchmark/test_mm.py::test_mm")
    p.add_argument("--dtypes", nargs="+", default=None, metavar="D",
                   help="dtypes to run (default: the benchmark's own)")
    _common.add_suite_args(p)
    _common.add_backend_args(p)
    _common.add_measure_args(p, default_timeout=contract.DEFAULT_TIMEOUT_S)
    p.add_argument("--replay-from", type=Path, metavar="RUN_DIR",
                   help="replay the autotune configs recorded by that cell (default: record)")
    p.add_argument("--no-record", action="store_true", help="neither record nor replay configs")
    p.add_argument("--out", type=Path, help="cell directory (default: <runs root>/run_<op>_<time>)")
    p.add_argument("--runs-root", type=Path, help="default parent of --out (default: $ZL_RUNS_ROOT or ./runs)")
    p.add_argument("--env", action="append", type=_common.env_pair, default=[], metavar="NAME=VALUE",
                   help="environment override for this cell (repeatable)")
    p.set_defaults(handler=run)


def build_op(args: argparse.Namespace, sources: Sources | None = None) -> OpSpec:
    sources = sources or Sources()
    spec = OpSpec.parse(args.op, prefixes=sources.prefixes, default_source=sources.default_name)
    if args.op_file:
        spec = attrs.evolve(spec, op_file=check_name("op file", args.op_file))
    if args.dtypes:
        spec = attrs.evolve(spec, dtypes=check_dtypes(args.dtypes))
    return spec


def run(args: argparse.Namespace) -> int:
    op = build_op(args)  # malformed names fail before any probing
    host = plugin_host()
    got = resolve(host, _common.where_from(args), _common.measurement_from(args),
                  what=f"zl run --op {op.op}")
    op = build_op(args, got.sources)  # a source prefix is known once the sources are
    provider, source, backend, device = got.provider, got.sources, got.backend, got.device
    if args.replay_from and args.no_record:
        raise UsageError("--replay-from and --no-record exclude each other")
    mode = "replay" if args.replay_from else ("uncontrolled" if args.no_record else "record")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out or runs_root(args.runs_root) / f"run_{op_folder(op.op)}_{stamp}"
    # The same settings as a campaign's cells (compile-only: nothing tuned to pin).
    request = cell_settings(got.measure, source).request(
        op=op, backend=backend, device=device, out_dir=Path(out).resolve(), env=dict(args.env),
        side="", autotune_mode=mode, replay_from=args.replay_from, test_node=args.test_node)
    # The cell's output (and a wait for a busy device) is progress: stderr, not under -q.
    echo = log.info if log.isEnabledFor(logging.INFO) else None
    try:
        if sweep_shards.wanted(request):
            outcome = sweep_shards.run_sharded(host, provider, request, say=log.info,
                                               run=lambda req: run_cell(host, provider, req, echo=echo))
        else:
            outcome = run_cell(host, provider, request, echo=echo)
    except PreflightError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    state = ("stalled (its Python stacks: stacks.txt)" if outcome.stalled
             else "timed out" if outcome.timed_out else f"rc={outcome.rc}")
    markers = " ".join(f"{k}={v}" for k, v in outcome.markers.items() if v)
    print(f"zl run: {op.op} on {backend.name}:{device if device is not None else '-'} {state} "
          f"in {outcome.elapsed_s:.1f}s; rows ok={outcome.success_rows} failed={outcome.failed_rows}"
          f"{'; ' + markers if markers else ''}; cell: {outcome.cell_dir}")
    if outcome.timed_out:
        return outcome.rc  # 124 timed out, 125 stalled
    return 0 if outcome.rc == 0 else 1
