"""``zl worker``: offer this host's devices as lanes to a Dask scheduler.

Each device becomes one ``lane`` resource of a Dask worker running in this
process; ``zl screen|ab --scheduler ADDRESS`` then runs one operator task per lane.
Needs ``pip install 'zl-core[dask]'``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os

from zl_core.app.resolve import BACKEND_ENV, resolve_backend, resolve_devices
from zl_core.campaigns import dask_executor
from zl_core.host import plugin_host

log = logging.getLogger(__name__)


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
    p.add_argument("--scratch", help=f"where tasks run before their folders travel back (default: ${dask_executor.SCRATCH_ENV} or the temp dir)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    distributed = dask_executor.import_distributed()
    host = plugin_host()
    backend = resolve_backend(host, args.backend)
    devices = resolve_devices(host, backend, args.devices, what="zl worker")
    os.environ[dask_executor.WORKER_BACKEND_ENV] = backend.name
    os.environ[dask_executor.WORKER_DEVICES_ENV] = ",".join(devices)
    if args.scratch:
        os.environ[dask_executor.SCRATCH_ENV] = args.scratch

    async def serve() -> None:
        async with distributed.Worker(args.scheduler, nthreads=len(devices), name=args.name,
                                      resources={dask_executor.LANE: len(devices)}) as worker:
            log.info("zl worker: %d lane(s) %s:%s offered to %s as %s", len(devices), backend.name,
                     ",".join(devices), args.scheduler, worker.address)
            await worker.finished()

    asyncio.run(serve())
    return 0
