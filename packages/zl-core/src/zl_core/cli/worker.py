"""``zl worker``: offer this host's devices as lanes to a Dask scheduler.

Each device becomes one ``lane`` resource of a Dask worker running in this
process; ``zl screen|ab --scheduler ADDRESS`` then runs one operator task per lane.
Needs ``pip install 'zl-core[dask]'``.
"""

from __future__ import annotations

import argparse

from zl_core.app import plugin_host
from zl_core.app.devices import SCRATCH_ENV, serve_worker
from zl_core.app.resolve import BACKEND_ENV


def add_parser(sub) -> None:
    p = sub.add_parser("worker", help="offer this host's devices to a Dask scheduler (zl-core[dask])",
                       description="Start a Dask worker whose lanes are this host's devices; "
                       "campaigns started with --scheduler run their operators on them.")
    p.add_argument("--scheduler", required=True, metavar="tcp://HOST:8786",
                   help="address of the Dask scheduler ('dask scheduler' prints it)")
    p.add_argument("--backend", help=f"backend name or alias (default: ${BACKEND_ENV}, or the only one installed)")
    p.add_argument("--devices", default="all", metavar="all|0,1,...",
                   help="devices to offer (default: all the backend finds)")
    p.add_argument("--name", help="worker name shown by the scheduler (default: the worker's "
                   "address, as Dask names it)")
    p.add_argument("--scratch", help=f"where tasks run before their folders travel back (default: ${SCRATCH_ENV} or the temp dir)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    serve_worker(plugin_host(), scheduler=args.scheduler, backend_name=args.backend,
                 devices=args.devices, name=args.name, scratch=args.scratch)
    return 0
