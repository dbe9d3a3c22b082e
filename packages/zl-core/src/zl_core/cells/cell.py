"""One cell: one fresh process, one operator, one device, one side's environment.

The core owns everything generic about a cell: its directory, a fresh Triton
cache (so zero ``.ttgir`` files never means "warm cache skipped compilation"),
an isolated tuner cache, device visibility, the identity written before the run
and merged after it, an ANSI-free ``run.log``, marker counts, and a timeout that
kills the whole process group. The provider only supplies the command line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from zl_core.cells import cell_setup, cellguard, devicelock, liveness, warmstart

# What a cell starts with lives in cell_setup; these names are still taken from here.
from zl_core.cells.cell_setup import (  # noqa: F401
    cell_environment,
    compile_workers,
    compiler_identity,
    compiler_spec,
    environment,
    identify_device,
    initial_identity,
    zl_versions,
)
from zl_core.foundation import convert, interrupts, stamps
from zl_core.foundation.errors import PreflightError, ResultsUnwritableError, UsageError
from zl_core.interface import caliber, contract, phases, timing_gate
from zl_core.interface.provider import CellRequest, Provider
from zl_core.interface.rows import LOG_NAME
from zl_core.plugins.host import PluginHost

logger = logging.getLogger(__name__)  # "log" is the cell's run.log below

MARKERS = contract.MARKERS
_MARKER_RE = re.compile(r"(?:^|\s)(" + "|".join(MARKERS) + r")(?=\s|$)")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
EXIT_TIMEOUT = 124
#: A cell ended by its stall window (``--stall-timeout``): no output or progress beat.
EXIT_STALLED = 125
#: How long a stalled cell gets to write its stacks before its group is killed.
STACKS_GRACE_S = 3.0
POLL_S = 0.5
KILL_GRACE_S = 5.0
TRITON_CACHE = contract.TRITON_CACHE
TUNER_CACHE = contract.TUNER_CACHE
STACKS_FILE = contract.STACKS_FILE
PROGRESS_FILE = contract.PROGRESS_FILE


@attrs.frozen(kw_only=True)
class CellOutcome:
    cell_dir: Path
    rc: int
    timed_out: bool  # ended by zl: its timeout, or its stall window (then ``stalled`` too)
    elapsed_s: float
    start: float
    end: float
    markers: dict[str, int]
    success_rows: int
    failed_rows: int
    preflight: str = ""  # the failed check's line, when the cell never started
    stalled: bool = False  # no output or progress for the stall window; rc is EXIT_STALLED
    rows_error: str = ""  # the provider could not read the cell's rows: the cell failed
    #: Why its tests skipped at run time (pytest.skip in the benchmark, skipif, xfail).
    skips: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out and not self.rows_error

    @property
    def skipped(self) -> bool:
        """The cell ran, measured nothing, and its tests skipped at run time: the
        benchmark declined this device or build, which is no failure and no verdict."""
        return self.ok and self.success_rows == 0 and self.failed_rows == 0 and bool(self.skips)


def strip_ansi(text: str) -> str:
    return _ANSI_RE.sub("", text)


def marker_fields(cell_dir: Path, marker: str) -> str:
    """What the first ``marker`` line of a cell's run.log says after the marker's name
    (``active=x loaded=y``); "" when the log has no such line or cannot be read."""
    found = re.compile(rf"(?:^|\s){re.escape(marker)}(?:\s+(.*))?$")
    try:
        with open(Path(cell_dir) / LOG_NAME, encoding="utf-8", errors="replace") as log:
            for line in log:
                match = found.search(line.rstrip("\n"))
                if match:
                    return (match.group(1) or "").strip()
    except OSError:
        pass  # safe: the caller still names the marker, from its count
    return ""


def prefixed(say: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    """``say`` with ``prefix`` before every line (a cell's lines among others')."""
    return lambda text: say(prefix + text)


def _now_iso() -> str:
    return stamps.utc_stamp()


def prepare_cell_dir(path: Path, *, fresh: bool = True) -> Path:
    """Create the cell directory; refuse to mix a new cell into an old one."""
    path = Path(path)
    if fresh and path.exists() and any(path.iterdir()):
        raise UsageError(f"cell directory {path} already holds a run; choose another --out "
                         "or remove it")
    path.mkdir(parents=True, exist_ok=True)
    return path


def count_results(provider: Provider, cell_dir: Path) -> tuple[int, int, str, tuple[str, ...]]:
    """(success, failed, problem, skips) of the cell, as its provider reads them: its rows,
    what the provider raised instead (a provider bug or an unreadable result must fail the
    cell with its reason, never read as a cell that measured nothing), and why its tests
    skipped at run time."""
    try:
        read = provider.read_rows(cell_dir)
    except Exception as exc:  # noqa: BLE001 - recorded in the identity and the log, the cell fails
        text = " ".join(str(exc).split())[:300]
        return 0, 0, f"suite {provider.name} could not read the cell's rows: {type(exc).__name__}" + (
            f": {text}" if text else ""), ()
    ok = sum(1 for r in read.rows if r.status == "SUCCESS")
    return ok, len(read.rows) - ok, "", read.skips


def run_cell(host: PluginHost, provider: Provider, request: CellRequest, *,
             echo: Callable[[str], None] | None = None, fresh_dir: bool = True,
             say: Callable[[str], None] | None = None) -> CellOutcome:
    """Run one cell to completion (or timeout) and return what happened.

    ``echo`` hears the cell's output; ``say`` what the orchestrator has to tell while it
    waits (a busy device), as a campaign's console line. A device held past the request's
    lock timeout raises :class:`~zl_core.foundation.errors.DeviceBusyError`.

    A failed preflight raises :class:`PreflightError` after writing its line into
    the cell's ``run.log``, so a campaign keeps the evidence.
    """
    signum = interrupts.requested()
    if signum is not None:  # the campaign is ending: start nothing new
        raise interrupts.Interrupted(signum)
    cell = prepare_cell_dir(Path(request.out_dir), fresh=fresh_dir)
    log_path = cell / LOG_NAME
    start = time.time()
    try:
        provider.preflight(request, host)
        device_identity = {} if request.compile_only else identify_device(host, request)
    except PreflightError as exc:
        log_path.write_text(str(exc) + "\n", encoding="utf-8")
        spent = time.time() - start
        caliber.write_identity(cell, {"schema": 1, "op": request.op.op, "side": request.side,
                                      "preflight_failed": exc.check, "rc": 3,
                                      phases.KEY: phases.assemble(wall_s=spent, preflight_s=spent,
                                                                  spawned=None, exited=None,
                                                                  cell=None, window=(start, start + spent))})
        raise
    preflight_s = time.time() - start
    command = provider.cell_command(request, host)
    prepared = environment(host, request, extra=dict(command.env), unset=command.unset,
                           compiler=compiler_spec(provider, request.backend))
    env = prepared.env
    logger.debug("cell %s %s on %s:%s in %s: %s; side variables: %s", request.op.op, request.side or "-",
                 request.backend.name, request.device, command.cwd, shlex.join(command.argv), request.env)
    identity = initial_identity(host, request, provider, dict(command.identity), device_identity,
                                compiler_identity(request, command, prepared))
    zygote = None
    if request.start == "warm":
        zygote, note = warmstart.for_cell(provider.warm_plan(request), provider.name, request.python,
                                          command.argv, env, request.env)
        identity.update({"start": "warm" if zygote else "cold",
                         "warm_modules": list(zygote.imported) if zygote else [],
                         **({"start_note": note} if note else {})})
    caliber.write_identity(cell, identity)
    markers = {m: 0 for m in MARKERS}
    timed_out = stalled = False
    watch = liveness.Watch(cell=cell, window_s=request.stall_timeout_s)
    device = None if request.compile_only else request.device
    with open(log_path, "w", encoding="utf-8", errors="replace") as log, \
            devicelock.holding(request.backend.name, device, on_wait=_say(log, echo, say),
                               timeout_s=request.lock_timeout_s) as lock, \
            _whole_inside_the_gate(request) as whole:
        log.write("# " + " ".join(command.argv) + "\n")
        log.flush()
        # The guard holds the cell's process group and ends it if this process dies;
        # the cell inherits the device lock, so even an orphan keeps its device.
        spawned = time.time()
        proc = cellguard.spawn(command.argv, cwd=command.cwd, env=env, stdout=subprocess.PIPE,
                               hold_fd=None if lock is None else lock.fd,
                               zygote=None if zygote is None else zygote.socket_path)
        interrupts.register(proc.pid)
        watch.last = spawned
        reader = threading.Thread(target=_pump, args=(proc, log, markers, echo, watch), daemon=True)
        reader.start()
        try:
            ended = _wait(proc, watch, request.timeout_s, gate_wait=cell / contract.GATE_WAIT_FILE)
            if ended is not None:
                timed_out, stalled = True, ended == "stalled"
                if stalled:  # its stacks first: where it is stuck is the whole point
                    liveness.ask_for_stacks(proc.pid)
                    time.sleep(STACKS_GRACE_S)
                _kill_group(proc)
                log.flush()
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            exited = time.time()
            interrupts.unregister(proc.pid)
            reader.join(timeout=10)
        if stalled:
            log.write(f"CELL_STALLED: no output or progress for {request.stall_timeout_s:g}s; "
                      f"Python stacks in {cell / STACKS_FILE}; process group killed\n")
        elif timed_out:
            log.write(f"CELL_TIMEOUT after {request.timeout_s:g}s: process group killed\n")
    end = time.time()
    rc = EXIT_STALLED if stalled else EXIT_TIMEOUT if timed_out else proc.returncode
    for cache in (TRITON_CACHE, TUNER_CACHE):
        shutil.rmtree(cell / cache, ignore_errors=True)
    (cell / PROGRESS_FILE).unlink(missing_ok=True)
    (cell / contract.GATE_WAIT_FILE).unlink(missing_ok=True)  # a cell killed while it waited
    stacks = cell / STACKS_FILE
    if not stalled and stacks.is_file() and stacks.stat().st_size == 0:
        stacks.unlink()  # armed, never asked: no file says "stacks" without any
    success, failed, rows_error, skips = count_results(provider, cell)
    if rows_error:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"zl: {rows_error}\n")
    signum = interrupts.requested()
    disk = disk_fault(log_path) if rc != 0 and not timed_out and signum is None else ""
    own = (caliber.read_identity(cell) or caliber.CellIdentity()).cell_phases
    if whole is not None:  # the orchestrator's hold is the cell's
        own = {**(own or {}), timing_gate.KEY: whole.record()}
    caliber.merge_identity(cell, {
        "rc": rc, "timed_out": timed_out, "stalled": stalled, "elapsed_s": round(end - start, 3),
        "longest_silence_s": round(watch.longest_silence_s, 1),
        **({"stacks": STACKS_FILE} if stalled and (cell / STACKS_FILE).is_file() else {}),
        phases.KEY: phases.assemble(wall_s=end - start, preflight_s=preflight_s, spawned=spawned,
                                    exited=exited, cell=own, window=(start, end)),
        # An interrupted cell is not finished: a resumed campaign moves it aside and reruns it.
        # So is one that a full or read-only disk stopped: that is no verdict on the code.
        **({"interrupted": signal.Signals(signum).name} if signum else
           {"interrupted": "disk", "disk_fault": disk} if disk else {"finished": _now_iso()}),
        "markers": markers, "success_rows": success, "failed_rows": failed,
        **({"rows_error": rows_error} if rows_error else {}),
        **({"skips": list(skips)} if skips else {}),
    })
    if signum is not None:  # killed by the campaign's interruption: no outcome to report
        raise interrupts.Interrupted(signum)
    if disk:
        raise CellDiskError(cell, disk)
    return CellOutcome(cell_dir=cell, rc=rc, timed_out=timed_out, stalled=stalled,
                       elapsed_s=round(end - start, 3),  # as recorded: a kept cell reads the same
                       start=start, end=end, markers=markers, success_rows=success,
                       failed_rows=failed, rows_error=rows_error, skips=skips)


#: How Python and the C library say a disk refused a write, as a failing cell prints it.
_DISK_FAULTS = re.compile(r"\[Errno (?:28|30|122)\][^\n]*|No space left on device[^\n]*|"
                          r"Read-only file system[^\n]*|Disk quota exceeded[^\n]*")
#: A failing cell's last words are at the end of its log.
_LOG_TAIL_BYTES = 64 * 1024


def disk_fault(log_path: Path) -> str:
    """The line of a failed cell's log that says a disk refused its writes ("" when none):
    a full, read-only or over-quota disk is the machine's fault, never a verdict."""
    try:
        with open(log_path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - _LOG_TAIL_BYTES))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    found = _DISK_FAULTS.findall(tail)
    return found[-1].strip()[:200] if found else ""


class CellDiskError(ResultsUnwritableError):
    """A cell stopped because a disk refused its writes: the campaign stops, resumable
    (its campaign adds how to resume it: :meth:`then`)."""

    def __init__(self, cell: Path, line: str, then: str = "run the cell again") -> None:
        self.cell, self.line = cell, line
        super().__init__(f"cell {cell} stopped on a disk fault, not on its code: {line}; free space "
                         f"or fix that disk, then {then}")

    def then(self, then: str) -> CellDiskError:
        return CellDiskError(self.cell, self.line, then)


@contextlib.contextmanager
def _whole_inside_the_gate(request: CellRequest) -> Iterator[timing_gate.TimingGate | None]:
    """A pipelined cell without timing phases (accuracy tests) still runs kernels: it runs
    whole inside its device's timing gate, so it never runs beside another cell's timing."""
    if not cell_setup.gated_whole(request):
        yield None
        return
    gate = timing_gate.TimingGate(str(devicelock.gate_path(request.backend.name, str(request.device))))
    gate.enter()
    try:
        yield gate
    finally:
        gate.leave()


def _say(log, *listeners: Callable[[str], None] | None) -> Callable[[str], None]:
    def say(text: str) -> None:
        log.write(text + "\n")
        log.flush()
        for listener in listeners:
            if listener is not None:
                listener(text)
    return say


def _wait(proc: subprocess.Popen, watch: liveness.Watch, timeout_s: float,
          gate_wait: Path | None = None) -> str | None:
    """Until the cell exits (None), its timeout passes ("timeout") or it stalls ("stalled").
    While ``gate_wait`` exists the cell waits for another cell's timing (a pipeline): that
    time moves its deadline and is no silence."""
    deadline = time.monotonic() + timeout_s
    checked = time.monotonic()
    while True:
        left = deadline - time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(POLL_S, left)))
            return None
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if gate_wait is not None and gate_wait.exists():
            deadline += now - checked
            watch.excuse()
        checked = now
        if watch.poll():
            return "stalled"
        if left <= 0:
            return "timeout"


def _pump(proc: subprocess.Popen, log, markers: dict[str, int],
          echo: Callable[[str], None] | None, watch: liveness.Watch | None = None) -> None:
    assert proc.stdout is not None
    for raw in iter(proc.stdout.readline, b""):
        if watch is not None:
            watch.output()
        line = strip_ansi(raw.decode("utf-8", errors="replace"))
        for match in _MARKER_RE.finditer(line):
            markers[match.group(1)] += 1
        log.write(line)
        log.flush()
        if echo is not None:
            echo(line.rstrip("\n"))


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM the cell's process group, then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
            # Children may outlive the leader; sweep the group once more.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return
        except subprocess.TimeoutExpired:
            continue
