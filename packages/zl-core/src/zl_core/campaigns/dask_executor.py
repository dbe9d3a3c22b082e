"""The Dask executor: operator tasks on the lanes of ``zl worker`` processes, any host.

Needs the ``dask`` extra (``pip install 'zl-core[dask]'``, which brings Dask
distributed). Every task asks the scheduler for one ``lane`` resource; a worker
started by ``zl worker`` offers one lane per device. No shared filesystem is
assumed: on the worker a task runs on a lane whose ``cell_root`` is a scratch copy of
the campaign folder, and what it wrote travels back as a tar archive that this side
unpacks into the real campaign folder, together with the task's result and the cell
reports it made (replayed into the campaign's sink, so status.tsv and the progress
display see every cell), their paths named under the campaign folder again.

When a worker dies, the scheduler reruns its task from scratch on another worker.
Every start of a task is logged as a scheduler event; the campaign records each
operator's attempts (host, worker, device) in ``dask_tasks.tsv`` and says when a
task ran more than once. The FlagGems checkout, the interpreter and any shape file
must exist under the same paths on every host.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, TypeVar

import attrs

from zl_core.cells.cell import CellOutcome
from zl_core.cells.devicelock import DeviceLock
from zl_core.foundation.errors import UsageError

from .executor import CampaignSink, CellSink, Lane, Task, TaskFunction, TaskRuntime, task_op

T = TypeVar("T")
R = TypeVar("R")
LANE = "lane"
EVENT_TOPIC = "zl-task-start"
TASKS_TSV = "dask_tasks.tsv"
WORKER_BACKEND_ENV = "ZL_WORKER_BACKEND"
WORKER_DEVICES_ENV = "ZL_WORKER_DEVICES"
SCRATCH_ENV = "ZL_WORKER_SCRATCH"
INSTALL_HINT = "the Dask executor needs Dask distributed: pip install 'zl-core[dask]'"
_POLL_S = 0.2


def import_distributed():
    """``distributed``, or a one-line usage error saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return distributed


# -- on the worker ------------------------------------------------------------------


class RecordingSink:
    """Collects a task's cell reports on the worker (a :class:`CellSink`, each call kept as
    its method's name and keywords); the campaign side replays them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def cell_started(self, *, op: str, round_no: int, side: str, switch_value: str) -> None:
        self.calls.append(("cell_started", {"op": op, "round_no": round_no, "side": side,
                                            "switch_value": switch_value}))

    def cell_finished(self, *, op: str, round_no: int, side: str, switch_value: str,
                      outcome: CellOutcome, summary: str) -> None:
        self.calls.append(("cell_finished", {"op": op, "round_no": round_no, "side": side,
                                             "switch_value": switch_value, "outcome": outcome,
                                             "summary": summary}))

    def cell_skipped(self, *, op: str, round_no: int, side: str, why: str) -> None:
        self.calls.append(("cell_skipped", {"op": op, "round_no": round_no, "side": side, "why": why}))

    def check_started(self, *, op: str, side: str, label: str) -> None:
        self.calls.append(("check_started", {"op": op, "side": side, "label": label}))

    def check_finished(self, *, op: str, side: str, text: str) -> None:
        self.calls.append(("check_finished", {"op": op, "side": side, "text": text}))

    def line(self, text: str) -> None:
        self.calls.append(("line", {"text": text}))

    def more_cells(self, n: int, why: str = "") -> None:
        self.calls.append(("more_cells", {"n": n, "why": why}))


_lanes_lock = threading.Lock()
_lanes_busy: set[str] = set()


def _take_lane(preferred: str | None = None) -> tuple[str, str, DeviceLock]:
    """A free device of this worker: not busy in this process and lockable on this host;
    ``preferred`` first (a resumed operator's kept cells ran there)."""
    backend = os.environ.get(WORKER_BACKEND_ENV, "")
    devices = [d for d in os.environ.get(WORKER_DEVICES_ENV, "").split(",") if d]
    devices.sort(key=lambda d: d != preferred)
    if not backend or not devices:
        raise RuntimeError("this Dask worker offers no zl lanes; start workers with "
                           "'zl worker --scheduler ADDRESS'")
    while True:
        with _lanes_lock:
            for device in devices:
                if device in _lanes_busy:
                    continue
                lock = DeviceLock(backend, device)
                if lock.try_acquire():
                    _lanes_busy.add(device)
                    return backend, device, lock
        time.sleep(_POLL_S)


def _give_back(device: str, lock: DeviceLock) -> None:
    lock.release()
    with _lanes_lock:
        _lanes_busy.discard(device)


def _archive(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for child in sorted(folder.iterdir()):
            tar.add(child, arcname=child.name)
    return buffer.getvalue()


def _seed(root: Path, op: str) -> bytes | None:
    """What a resumed operator already has (its kept cells), to travel with its task."""
    folder = root / op
    if not folder.is_dir():
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=op)
    return buffer.getvalue()


def homed(value: T, scratch: Path, root: Path) -> T:
    """``value`` (a task's result, its cell reports) with every path, and path string,
    under the worker's copy ``scratch`` named under the campaign folder ``root``; the
    rest of it, records and containers included, as it was."""
    scratch, root = Path(scratch), Path(root)
    prefix = str(scratch) + "/"

    def home(item: Any) -> Any:
        if attrs.has(type(item)):
            changed: dict[str, object] = {}
            for field in attrs.fields(type(item)):
                old = getattr(item, field.name)
                new = home(old)
                if new is not old:
                    changed[field.alias] = new
            return attrs.evolve(item, **changed) if changed else item
        if isinstance(item, dict):
            items = {k: home(v) for k, v in item.items()}
            return items if any(items[k] is not item[k] for k in item) else item
        if isinstance(item, (tuple, list)) and not hasattr(item, "_fields"):
            homed_items = [home(v) for v in item]
            if all(a is b for a, b in zip(homed_items, item, strict=True)):
                return item
            return tuple(homed_items) if isinstance(item, tuple) else homed_items
        if isinstance(item, PurePath):
            try:
                return type(item)(root / Path(item).relative_to(scratch))
            except ValueError:
                return item
        if isinstance(item, str) and (item == str(scratch) or item.startswith(prefix)):
            return str(root) + item[len(str(scratch)):]
        return item

    return home(value)


def run_on_worker(fn: TaskFunction, task: Task, campaign_root: str,
                  seed: bytes | None = None, kept_on: str | None = None) -> dict:
    """Run one task on a lane of this worker (the device ``kept_on`` first, where a resumed
    operator's kept cells ran); return its result, reports and folder. Its runtime is the
    worker's own: this host's plugin host, and a sink whose calls travel back."""
    from distributed import get_worker

    from zl_core.plugins.host import plugin_host

    worker = get_worker()
    backend, device, lock = _take_lane(kept_on)
    try:
        host = socket.gethostname()
        worker.log_event(EVENT_TOPIC, {"key": str(worker.get_current_task()), "op": task_op(task),
                                       "host": host, "worker": worker.address, "device": device,
                                       "time": time.time()})
        base = Path(tempfile.mkdtemp(prefix="zl-task-", dir=os.environ.get(SCRATCH_ENV) or None))
        try:
            root = Path(campaign_root)
            scratch = base / root.name
            scratch.mkdir()
            if seed is not None:  # a resumed operator: its finished cells are kept there too
                _unpack(seed, scratch)
            sink = RecordingSink()
            result = fn(task, Lane(device, cell_root=scratch), TaskRuntime(host=plugin_host(), sink=sink))
            return {"result": homed(result, scratch, root), "calls": homed(sink.calls, scratch, root),
                    "archive": _archive(scratch), "host": host, "device": f"{backend}:{device}"}
        finally:
            shutil.rmtree(base, ignore_errors=True)
    finally:
        _give_back(device, lock)


# -- on the campaign's host -------------------------------------------------------------


def _unpack(archive: bytes, root: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(root, filter="data")  # no absolute paths, no escapes, no devices
            return
        for member in tar.getmembers():
            if member.name.startswith("/") or ".." in Path(member.name).parts or not (
                    member.isfile() or member.isdir()):
                raise RuntimeError(f"refusing archive member {member.name!r} from a worker")
        tar.extractall(root)


def _replay(calls: list[tuple[str, dict]], sink: CellSink) -> None:
    for name, kwargs in calls:
        getattr(sink, name)(**kwargs)


class DaskExecutor:
    """Runs each task on one lane of a ``zl worker`` connected to the scheduler."""

    def __init__(self, scheduler: str, *, campaign_root: Path | None = None,
                 connect_timeout_s: float = 30.0) -> None:
        self.distributed = import_distributed()
        self.scheduler = scheduler
        # None: the campaign folder of the sink the tasks report to (CampaignSink.layout).
        self.campaign_root = None if campaign_root is None else Path(campaign_root)
        self.connect_timeout_s = connect_timeout_s
        self._client = None

    def client(self):
        if self._client is None:
            try:
                self._client = self.distributed.Client(self.scheduler, timeout=self.connect_timeout_s)
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot reach the Dask scheduler at {self.scheduler} ({exc}); "
                                 "start one with 'dask scheduler' and workers with "
                                 f"'zl worker --scheduler {self.scheduler}'") from None
        return self._client

    @property
    def concurrency(self) -> int:
        """Lanes offered by the workers connected now."""
        workers = self.client().scheduler_info().get("workers", {})
        return int(sum(w.get("resources", {}).get(LANE, 0) for w in workers.values())) or 1

    def run(self, fn: TaskFunction[Task, R], tasks: Iterable[Task], runtime: TaskRuntime, *,
            kept_on: Mapping[str, str] | None = None) -> Iterator[R]:
        kept_on = kept_on or {}
        client = self.client()
        if self.campaign_root is None:
            if not isinstance(runtime.sink, CampaignSink):
                raise TypeError("DaskExecutor needs campaign_root= where the sink is no CampaignSink")
            self.campaign_root = Path(runtime.sink.layout.root)
        campaign_root = self.campaign_root
        keys = {}
        futures = []
        for task in tasks:
            key = f"zl-{task_op(task)}-{uuid.uuid4().hex[:8]}"
            keys[key] = task_op(task)
            futures.append(client.submit(run_on_worker, fn, task, str(campaign_root),
                                         _seed(campaign_root, task_op(task)),
                                         kept_on.get(task_op(task)),
                                         resources={LANE: 1}, pure=False, key=key))
        try:
            for future in self.distributed.as_completed(futures):
                out = future.result()
                # The worker's copy holds the operator's kept cells and the new ones.
                if keys[future.key]:
                    shutil.rmtree(campaign_root / keys[future.key], ignore_errors=True)
                _unpack(out["archive"], campaign_root)
                _replay(out["calls"], runtime.sink)
                yield out["result"]
        finally:
            self._record_attempts(client, keys, runtime, campaign_root)
            for future in futures:
                future.cancel()

    def _record_attempts(self, client, keys: dict[str, str], runtime: Any, root: Path | None = None) -> None:
        """Write every start of this campaign's tasks to dask_tasks.tsv; name the retried ones."""
        try:
            events = client.get_events(EVENT_TOPIC)
        except Exception as exc:  # noqa: BLE001 - the record is evidence, not a reason to fail the campaign
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
            runtime.sink.line(f"{TASKS_TSV} not written: the scheduler's task events cannot be read "
                              f"({reason}); which worker ran each operator is not recorded")
            return
        starts: dict[str, list[dict]] = {}
        for _, msg in events:
            if isinstance(msg, dict) and msg.get("key") in keys:
                starts.setdefault(keys[msg["key"]], []).append(msg)
        lines = ["op\tattempt\thost\tworker\tdevice"]
        for op in sorted(starts):
            for n, msg in enumerate(sorted(starts[op], key=lambda m: m.get("time", 0)), start=1):
                lines.append(f"{op}\t{n}\t{msg.get('host', '')}\t{msg.get('worker', '')}\t{msg.get('device', '')}")
            if len(starts[op]) > 1:
                runtime.sink.line(f"{op}: rerun from scratch after its worker died "
                                  f"({len(starts[op])} attempts, see {TASKS_TSV})")
        root = root or self.campaign_root
        if root is None:  # no campaign folder to write it into
            return
        (root / TASKS_TSV).write_text("\n".join(lines) + "\n", encoding="utf-8")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
