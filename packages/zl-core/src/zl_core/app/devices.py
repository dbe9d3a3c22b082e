"""Commands that serve this host's devices rather than run a campaign: the telemetry
sampler (``zl telemetry``) and a Dask worker offering the devices as lanes (``zl worker``)."""

from __future__ import annotations

import asyncio
import logging
import os

import attrs

from zl_core.campaigns import dask_executor
from zl_core.foundation.backend import Backend
from zl_core.plugins import telemetry
from zl_core.plugins.host import PluginHost

from .lanes import resolve_devices
from .resolve import resolve_backend

#: The first line of ``zl telemetry``'s TSV.
TELEMETRY_HEADER = telemetry.HEADER
#: Where ``zl worker`` runs tasks unless --scratch says otherwise.
SCRATCH_ENV = dask_executor.SCRATCH_ENV

log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class TelemetrySampler:
    """A backend's sampler for one device (None: every device), asked by :meth:`take`."""

    host: PluginHost
    backend: Backend
    device: str | None

    def take(self) -> telemetry.Sample:
        """One sample: its rows, else why none (``reason``), and a library passed over."""
        return telemetry.take_sample(self.host, self.backend, self.device)

    @staticmethod
    def lines(rows: list[dict[str, str]]) -> list[str]:
        """The sample's TSV lines, stamped now."""
        return telemetry.format_rows(rows, telemetry.utc_timestamp())


def telemetry_sampler(host: PluginHost, backend_name: str | None, device: str | None) -> TelemetrySampler:
    """The sampler ``zl telemetry`` reads: the backend named (or the only one) and the
    device asked for, else the one its visibility variable names, else every device."""
    backend = resolve_backend(host, backend_name)
    return TelemetrySampler(host=host, backend=backend, device=telemetry.sampler_device(backend, device))


def serve_worker(host: PluginHost, *, scheduler: str, backend_name: str | None, devices: str,
                 name: str | None, scratch: str | None) -> None:
    """Run a Dask worker whose ``lane`` resources are this host's devices until the
    scheduler ends it, saying (logged) what it offers once it is up."""
    distributed = dask_executor.import_distributed()
    backend = resolve_backend(host, backend_name)
    lanes = resolve_devices(host, backend, devices, what="zl worker")
    os.environ[dask_executor.WORKER_BACKEND_ENV] = backend.name
    os.environ[dask_executor.WORKER_DEVICES_ENV] = ",".join(lanes)
    if scratch:
        os.environ[dask_executor.SCRATCH_ENV] = scratch

    async def serve() -> None:
        async with distributed.Worker(scheduler, nthreads=len(lanes), name=name,
                                      resources={dask_executor.LANE: len(lanes)}) as worker:
            log.info("zl worker: %d lane(s) %s:%s offered to %s as %s", len(lanes), backend.name,
                     ",".join(lanes), scheduler, worker.address)
            await worker.finished()

    asyncio.run(serve())
