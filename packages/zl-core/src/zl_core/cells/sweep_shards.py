"""A recording cell's autotune sweep sharded over several devices; the measurement on one.

``--sweep-devices 0,1,2,3``: before a cell that records its autotune picks (a screen's
side A, an A/B campaign's first A, ``zl run``) runs, one *shard* cell per listed device
runs the same benchmark on its slice of the shape set (``contract.SWEEP_SHARD``,
``index/count``; the provider slices after the benchmark has settled its shapes), each
sweeping and recording its own picks. The provider checks that the shards covered the
whole shape set between them and merges their picks into one record
(:meth:`~zl_core.interface.provider.Provider.merge_sweep_shards`; where two shards picked
differently for one key, the lowest shard's pick is kept and the difference is
reported). The cell itself then runs on its own device, alone, replaying the merged
record: the measurement stays serial on one device, and its ``autotune_records/`` is
the merged record, in the format side B and later rounds replay unchanged.

Anything short of that (a shard that fails, times out or stalls; a hole in the shape
set; shards that saw different shape sets; a key the merged record lacks, seen as a
replay fallback in the measuring cell) discards the parallel sweep: the cell runs as it
would have without shards, sweeping serially, and the campaign prints
``SWEEP_SHARD_FALLBACK op=<op> reason=<why>``. Either way the shards' folders end in
``<cell>/sweep_shards/`` and the identity's ``sweep`` says what happened.

Shards listed on one device run one after the other (one device, one cell at a time),
those on different devices at the same time, each under its own device lock.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from zl_core.cells.cell import CellOutcome, prefixed, run_cell
from zl_core.foundation import interrupts
from zl_core.interface import caliber, contract
from zl_core.interface.provider import CellRequest, Provider
from zl_core.plugins.host import PluginHost

FALLBACK = contract.SWEEP_SHARD_FALLBACK
SHARDS_DIR = "sweep_shards"  # inside the finished cell
MERGED = "merged"  # <shards>/merged/autotune_records/: what the measuring cell replayed
WORK_SUFFIX = ".sweep"  # beside the cell while it runs (the cell's folder must start empty)


def wanted(request: CellRequest) -> bool:
    return (len(request.sweep_devices) >= 2 and request.autotune_mode == "record"
            and not request.compile_only and not request.sweep_shard)


def shard_requests(request: CellRequest, work: Path) -> list[CellRequest]:
    count = len(request.sweep_devices)
    return [attrs.evolve(request, out_dir=work / f"shard{i}", device=device,
                         sweep_shard=f"{i}/{count}", sweep_devices=())
            for i, device in enumerate(request.sweep_devices)]


def _run_shards(host: PluginHost, provider: Provider, shards: Sequence[CellRequest],
                say: Callable[[str], None]) -> list[CellOutcome | BaseException | None]:
    """Every shard, a thread per device (its shards in turn); outcomes in shard order."""
    outcomes: list[CellOutcome | BaseException | None] = [None] * len(shards)
    by_device: dict[str | None, list[int]] = {}
    for i, shard in enumerate(shards):
        by_device.setdefault(shard.device, []).append(i)

    def device_worker(indices: list[int]) -> None:
        for i in indices:
            if interrupts.requested() is not None:
                return
            try:
                outcomes[i] = run_cell(host, provider, shards[i],
                                       say=prefixed(say, f"shard {i}: "))
            except BaseException as exc:  # noqa: BLE001 - judged by the caller, with the rest
                outcomes[i] = exc

    threads = [threading.Thread(target=device_worker, args=(indices,), daemon=True,
                                name=f"zl-sweep-{device}") for device, indices in by_device.items()]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    finally:
        for thread in threads:  # a signal killed the shards' cells: they end at once
            thread.join()
    return outcomes


def _shard_problem(outcomes: Sequence[CellOutcome | BaseException | None]) -> str:
    for i, out in enumerate(outcomes):
        if out is None:
            return f"shard {i} did not run"
        if isinstance(out, BaseException):
            return f"shard {i} could not run: {type(out).__name__}: {out}".strip()
        if not out.ok:
            state = "stalled" if out.stalled else "timed out" if out.timed_out else f"ended rc={out.rc}"
            return f"shard {i} {state}"
    return ""


def run_sharded(host: PluginHost, provider: Provider, request: CellRequest, *,
                run: Callable[[CellRequest], CellOutcome], say: Callable[[str], None]) -> CellOutcome:
    """The cell of ``request``, its sweep sharded over ``request.sweep_devices``; ``run``
    runs a cell as the caller would without shards (retries included)."""
    cell = Path(request.out_dir)
    work = cell.with_name(cell.name + WORK_SUFFIX)
    shutil.rmtree(work, ignore_errors=True)  # a sweep an interrupted campaign left
    work.mkdir(parents=True)
    op = request.op.op
    started = time.time()
    sweep = {"devices": list(request.sweep_devices), "shards": len(request.sweep_devices)}
    problem = "" if provider.supports_sweep_shards else f"suite {provider.name} cannot shard a sweep"
    merge = None
    if not problem:
        shards = shard_requests(request, work)
        say(f"{op} {request.side}: sweeping on {len(shards)} shards "
            f"(devices {', '.join(str(s.device) for s in shards)})")
        outcomes = _run_shards(host, provider, shards, say=lambda text: say(f"{op} {request.side} {text}"))
        signum = interrupts.requested()
        if signum is not None:
            raise interrupts.Interrupted(signum)
        problem = _shard_problem(outcomes)
        if not problem:
            merge = provider.merge_sweep_shards([s.out_dir for s in shards], work / MERGED)
            problem = merge.problem
    sweep["shard_wall_s"] = round(time.time() - started, 3)
    if merge is not None and not problem:  # the cell's own line shows the measurement alone
        say(f"{op} {request.side}: {sweep['shards']} shards swept in {sweep['shard_wall_s']:.1f}s, "
            f"{merge.entries} picks merged; measuring on {request.device}")
    outcome = None
    if not problem:
        outcome = run(attrs.evolve(request, autotune_mode="replay", replay_from=work / MERGED,
                                   sweep_devices=()))
        holes = outcome.markers.get(contract.AUTOTUNE_REPLAY_FALLBACK, 0)
        if holes:
            problem = f"the merged picks missed {holes} key(s) the measurement needed"
        elif not outcome.ok:
            return _finish(cell, work, outcome, {**sweep, "mode": "sharded", "note": "measurement failed"})
        if problem and cell.exists():
            cell.rename(work / "measured")  # kept for the record, not counted
    if problem:
        say(f"{FALLBACK} op={op} reason={problem}; sweeping serially on {request.device}")
        outcome = run(attrs.evolve(request, sweep_devices=()))
        return _finish(cell, work, outcome, {**sweep, "mode": "serial", "fallback": problem})
    assert merge is not None and outcome is not None
    records = cell / "autotune_records"
    shutil.rmtree(records, ignore_errors=True)
    shutil.copytree(work / MERGED / "autotune_records", records)
    if merge.conflicts:
        say(f"{op} {request.side}: shards picked differently for {len(merge.conflicts)} key(s); "
            f"kept the lowest shard's pick: {merge.conflicts[0]}"
            + (f" (and {len(merge.conflicts) - 1} more, in run_identity.json)" if len(merge.conflicts) > 1 else ""))
    return _finish(cell, work, outcome, {**sweep, "mode": "sharded", "entries": merge.entries,
                                         "conflicts": list(merge.conflicts)},
                   recorded=True)


def _finish(cell: Path, work: Path, outcome: CellOutcome, sweep: dict, *,
            recorded: bool = False) -> CellOutcome:
    cell.mkdir(parents=True, exist_ok=True)
    target = cell / SHARDS_DIR
    shutil.rmtree(target, ignore_errors=True)
    work.rename(target)
    fields: dict = {"sweep": sweep}
    if recorded:
        # The picks are this campaign's own sweep, made on the shards: the cell records
        # them as a serial sweep would (side B replays this cell, as always).
        fields.update(autotune_mode="record", replay_source=None)
    caliber.merge_identity(cell, fields)
    return outcome
