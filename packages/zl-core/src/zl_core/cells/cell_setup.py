"""What a cell starts with: its environment and its identity (``run_identity.json``).

The environment is the caller's, scrubbed of the switch's families (no variable the
campaign's sides set, nor a member of its family, is inherited: :mod:`zl_core.foundation.compiler_env`),
then the provider's variables, the side's, the device's visibility and the core's share
of the ``ZL_*`` contract. The identity is written before the cell starts: the core's
generic caliber fields, the compiler build the cell's interpreter imports
(:mod:`zl_core.foundation.compiler_build`) and the compiler's variables as the cell got them, the
device as the vendor's tool names it, then the provider's own fields.
"""

from __future__ import annotations

import logging
import os
import platform
import socket
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from zl_core.cells import devicelock
from zl_core.foundation import bounded, compiler_build, stamps
from zl_core.foundation.backend import Backend
from zl_core.foundation.compiler_env import CellVars, CompilerEnv, inherited_now, scrub
from zl_core.foundation.errors import PreflightError
from zl_core.foundation.markers import ENTRY_POINT_GROUP
from zl_core.interface import contract
from zl_core.interface.provider import CellCommand, CellRequest, Provider
from zl_core.plugins.host import PluginHost

logger = logging.getLogger(__name__)

#: How long the vendor's tool gets to explain a device it could not identify.
DEVICE_TOOL_CHECK_S = 15.0
#: Variables the core sets in every cell besides the ``ZL_*`` contract.
CORE_SETS = ("TRITON_CACHE_DIR", "PYTHONUNBUFFERED")
_told: set[tuple] = set()


def zl_versions() -> dict[str, str]:
    """Versions of zl-core, zl-report and every distribution that ships a ``zl`` entry
    point (its providers and backends, whoever publishes them): provenance. Read again
    whenever a folder on the import path changed (an install or upgrade changes its
    site-packages folder), else kept: reading every distribution's metadata for each
    cell was a quarter of an orchestrator's time in campaigns of short cells."""
    key = tuple(_mtime_ns(entry) for entry in sys.path)
    with _versions_lock:
        if _versions_seen.get("key") != key:
            _versions_seen["key"], _versions_seen["found"] = key, _read_zl_versions()
        return dict(_versions_seen["found"])


_versions_lock = threading.Lock()
_versions_seen: dict[str, Any] = {}


def _mtime_ns(entry: str) -> tuple[str, int | None]:
    try:
        return entry, os.stat(entry or ".").st_mtime_ns
    except OSError:
        return entry, None


def _read_zl_versions() -> dict[str, str]:
    import importlib.metadata as md

    found = {}
    for dist in md.distributions():
        name = str((dist.metadata.get_all("Name") or [""])[0]).lower()
        if name in ("zl-core", "zl-report") or any(ep.group == ENTRY_POINT_GROUP for ep in dist.entry_points):
            found[name] = dist.version
    return dict(sorted(found.items()))


def compile_workers(asked: int) -> int:
    """The compile pool's threads for a cell on this host: ``asked``, or with 0 (the
    default) the cores this process may use, at most ``contract.COMPILE_WORKERS_CAP``.
    Resolved where the cell runs, so a Dask worker's host counts its own cores."""
    if asked > 0:
        return asked
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(contract.COMPILE_WORKERS_CAP, cores))


def compiler_spec(provider: Provider, backend: Backend) -> CompilerEnv:
    """The compiler's variables of a cell: its provider's and its backend's."""
    return backend.compiler_env | provider.compiler_env()


def zl_sets(backend: Backend) -> tuple[str, ...]:
    """What zl sets in every cell of ``backend`` itself, so that no cell inherits it."""
    return (*CORE_SETS, *contract.CORE_WRITES, *contract.PROVIDER_WRITES, *backend.visibility_env_keys)


def inherited_by_cells(provider: Provider, backend: Backend, switch_vars: tuple[str, ...],
                       environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The compiler's variables cells started now would inherit from ``environ`` (this
    process's): its ``compiler_env`` before a cell runs, less what the provider sets."""
    return inherited_now(os.environ if environ is None else environ, switch_vars,
                         compiler_spec(provider, backend), zl_sets(backend))


@attrs.frozen(kw_only=True)
class CellEnvironment:
    """A cell's whole environment, and its compiler's variables as the identity records them."""

    env: dict[str, str]
    compiler_vars: CellVars


def pipelined(request: CellRequest) -> bool:
    """The cell shares its device with a lane's other cells in flight (``--pipeline``)."""
    return request.pipeline > 1 and not request.compile_only and request.device is not None


def gates_itself(request: CellRequest) -> bool:
    """A pipelined cell that times takes the device's timing gate itself, at its first
    device phase (zl_core.interface.timing_gate)."""
    return pipelined(request) and request.check is None


def gated_whole(request: CellRequest) -> bool:
    """A pipelined cell that uses the device without timing phases (accuracy tests) runs
    entirely inside the gate, which the orchestrator takes for it."""
    return pipelined(request) and request.check is not None


def environment(host: PluginHost, request: CellRequest, *, base: Mapping[str, str] | None = None,
                extra: Mapping[str, str] | None = None, unset: tuple[str, ...] = (),
                compiler: CompilerEnv | None = None) -> CellEnvironment:
    """The cell's environment: the caller's (``base``, else this process's) less the
    switch's families, the provider's ``extra``, the side's overrides, visibility and the
    core's share of the ``ZL_*`` contract (:mod:`zl_core.interface.contract`).

    Contract variables inherited from the caller are dropped first, so each one reaches
    the cell from its one writer (the core, or the provider's ``extra``).
    """
    spec = compiler or CompilerEnv()
    caller, scrubbed = scrub(dict(os.environ if base is None else base),
                             (*request.switch_vars, *request.env), spec)
    if scrubbed:
        _tell(scrubbed, request)
    env = dict(caller)
    for key in (*contract.CORE_WRITES, *contract.PROVIDER_WRITES):
        env.pop(key, None)
    backend = request.backend
    cell = str(Path(request.out_dir).resolve())
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    env.update({str(k): str(v) for k, v in request.env.items()})
    for key in unset:
        env.pop(key, None)
    host.apply_visibility(backend, env, request.device)
    env["TRITON_CACHE_DIR"] = str(Path(request.compile_cache).resolve() if request.compile_cache
                                  else Path(cell) / contract.TRITON_CACHE)
    env.update({
        contract.CELL_DIR: cell,
        contract.BACKEND: backend.name,
        contract.OP: request.op.op,
        contract.DTYPES: ",".join(request.op.dtypes),
        contract.AUTOTUNE_MODE: request.autotune_mode,
        contract.TIMER: request.timer,
        contract.DIRECT_REPEAT: str(request.direct_repeat),
        contract.REPLAY_MS: f"{request.replay_ms:g}",
        contract.L2: request.l2,
        contract.COMPILE_WORKERS: str(compile_workers(request.compile_workers)),
        contract.SEED: env.get(contract.SEED, contract.DEFAULT_SEED),
        "PYTHONUNBUFFERED": "1",
    })
    if request.sweep_shard:
        env[contract.SWEEP_SHARD] = request.sweep_shard
    if gates_itself(request):
        env[contract.TIMING_GATE] = str(devicelock.gate_path(backend.name, str(request.device)))
        env[contract.GATE_RELEASE] = request.gate_release
        if request.gate_turn:
            env[contract.GATE_TURN] = request.gate_turn
    if request.replay_from is not None:
        env[contract.REPLAY_DIR] = str((Path(request.replay_from) / contract.AUTOTUNE_RECORDS_DIR).resolve())
    if request.compile_only:
        env[contract.COMPILE_ONLY] = "1"
        env[contract.TARGET] = request.target or ""
    written = {*(extra or {}), *request.env, *zl_sets(backend)}
    return CellEnvironment(env=env, compiler_vars=CellVars.of(env, inherited_from=caller, written=written,
                                                              scrubbed=scrubbed, spec=spec))


def cell_environment(host: PluginHost, request: CellRequest, base: dict[str, str] | None = None,
                     extra: dict[str, str] | None = None, unset: tuple[str, ...] = (),
                     compiler: CompilerEnv | None = None) -> dict[str, str]:
    """The environment alone (:func:`environment`)."""
    return environment(host, request, base=base, extra=extra, unset=unset, compiler=compiler).env


def _tell(scrubbed: Mapping[str, str], request: CellRequest) -> None:
    """Say once per process which inherited variables the switch's families kept out."""
    key = tuple(sorted(scrubbed.items()))
    if key in _told:
        return
    _told.add(key)
    logger.warning("not passed on to the cells (the switch and its family come from each side "
                   "alone): %s", " ".join(f"{k}={v}" for k, v in key))


def compiler_identity(request: CellRequest, command: CellCommand, cell_env: CellEnvironment) -> dict:
    """The identity's compiler fields: the build the cell's interpreter imports and the
    compiler's variables as the cell got them (``compiler_build`` and ``compiler_env`` are
    caliber fields)."""
    builds = compiler_build.cell_builds(request.python, request.backend.compiler_modules,
                                        cell_env.env, command.cwd)
    return {"compiler_build": compiler_build.caliber_value(builds),
            "compiler": {m: b.to_json() for m, b in builds.items()},
            "compiler_env": cell_env.compiler_vars.caliber,
            "compiler_vars": cell_env.compiler_vars.to_json()}


def identify_device(host: PluginHost, request: CellRequest) -> dict[str, str]:
    """What the vendor's tool says of the cell's device. An empty answer from a tool that
    is on PATH but fails (a driver gone mid-campaign) refuses the cell: without the
    device's identity its cells could not be compared, and the cell would run on a
    device in trouble."""
    found = host.device_identity(request.backend, request.device)
    if found:
        return found
    stopped = host.stopped_answering(request.backend)
    why = stopped or host.tool_problem(request.backend, min(DEVICE_TOOL_CHECK_S, bounded.plugin_timeout()))
    if why:
        raise PreflightError("vendor_tool", f"{why}; device {request.device}'s identity cannot "
                             "be read, so its cells could not be compared; fix the driver or "
                             "the tool (zl doctor) and run the operator again")
    return found


def initial_identity(host: PluginHost, request: CellRequest, provider: Provider,
                     provider_identity: dict, device_identity: dict | None = None,
                     compiler: dict | None = None) -> dict:
    """The identity written before the cell starts; ``compiler``: :func:`compiler_identity`."""
    backend = request.backend
    identity = {
        "schema": 1,
        "op": request.op.op,
        "op_file": request.op.op_file,
        "dtypes": list(request.op.dtypes),
        "side": request.side,
        "backend": backend.name,
        "device": request.device,
        "device_name": None,
        "timer": "none" if request.compile_only else request.timer,
        "bench_level": request.level,
        "shape_mode": ("upstream" if request.shapes == "upstream" else
                       f"file:{Path(request.shape_file).name}" if request.shape_file else "provider"),
        # The provider names a shared cache's location (provider_identity below).
        "tuner_cache": "isolated" if request.isolate_tuner_cache else "shared",
        "direct_repeat": request.direct_repeat,
        "replay_ms": None if request.compile_only else request.replay_ms,
        "timing": None if request.compile_only else (request.timing_plan or request.timing),
        # Whose Triton cache it compiled into: its own, or its side's across rounds.
        "compile_cache": "side" if request.compile_cache else "cell",
        # As asked; the timing plugin writes what its timer did (a direct timer flushes).
        "l2": None if request.compile_only else request.l2,
        "autotune_mode": request.autotune_mode,
        "replay_source": str(Path(request.replay_from).resolve()) if request.replay_from else None,
        "compile_only": request.compile_only,
        "concurrency": request.concurrency,
        "pipeline": request.pipeline,
        "gate_release": request.gate_release if pipelined(request) else None,
        "start": request.start,
        "compile_workers": compile_workers(request.compile_workers),
        "target": request.target if request.compile_only else None,
        "triton_version": None,
        "torch_version": None,
        **(compiler or {}),
        "env": dict(sorted(request.env.items())),
        "python": request.python,
        "python_version": platform.python_version(),
        "zl_versions": zl_versions(),
        "provider": provider.name,
        "host": socket.gethostname(),
        "started": stamps.utc_stamp(),
    }
    if not request.compile_only:
        # The vendor's tool names the device (device_name, and e.g. its uuid and driver);
        # the cell adds torch's name for it only when no tool answered.
        identity.update(host.device_identity(backend, request.device) if device_identity is None
                        else device_identity)
    else:
        identity["device_name"] = f"none (compile-only {request.target})"
    identity.update(provider_identity)
    return identity
