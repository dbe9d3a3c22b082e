"""``zl run``: one cell, its run directory, and what it measured."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from zl_core.app import plugin_host
from zl_core.app.cell import CellOptions, run_one_cell
from zl_core.cli import _common
from zl_core.interface import contract

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


def run(args: argparse.Namespace) -> int:
    options = CellOptions(op=args.op, op_file=args.op_file, dtypes=tuple(args.dtypes or ()),
                          test_node=args.test_node, where=_common.where_from(args),
                          measure=_common.measurement_from(args), replay_from=args.replay_from,
                          no_record=args.no_record, out=args.out, runs_root=args.runs_root,
                          env=tuple(args.env))
    # The cell's output (and a wait for a busy device) is progress: stderr, not under -q.
    echo = log.info if log.isEnabledFor(logging.INFO) else None
    ran = run_one_cell(plugin_host(), options, echo=echo, say=log.info)
    if ran.refused is not None:
        print(str(ran.refused), file=sys.stderr)
        return ran.refused.exit_code
    outcome = ran.outcome
    assert outcome is not None  # a cell its preflight did not refuse ran
    state = ("stalled (its Python stacks: stacks.txt)" if outcome.stalled
             else "timed out" if outcome.timed_out else f"rc={outcome.rc}")
    markers = " ".join(f"{k}={v}" for k, v in outcome.markers.items() if v)
    print(f"zl run: {ran.op} on {ran.backend}:{ran.device if ran.device is not None else '-'} {state} "
          f"in {outcome.elapsed_s:.1f}s; rows ok={outcome.success_rows} failed={outcome.failed_rows}"
          f"{'; ' + markers if markers else ''}; cell: {outcome.cell_dir}")
    if outcome.timed_out:
        return outcome.rc  # 124 timed out, 125 stalled
    return 0 if outcome.rc == 0 else 1
