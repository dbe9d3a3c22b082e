"""One cell: one fresh process, one operator, one device, one side's environment.

The core owns everything generic about a cell: its directory, a fresh Triton
cache (so zero ``.ttgir`` files never means "warm cache skipped compilation"),
an isolated tuner cache, device visibility, the identity written before the run
and merged after it, an ANSI-free ``run.log``, marker counts, and a timeout that
kills the whole process group. The provider only supplies the command line.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from zl_core.cells import cell_process, warmstart

# How a cell's process ends, as the core has always named it here.
from zl_core.cells.cell_process import EXIT_STALLED as EXIT_STALLED
from zl_core.cells.cell_process import EXIT_TIMEOUT as EXIT_TIMEOUT
from zl_core.cells.cell_process import MARKERS as MARKERS
from zl_core.cells.cell_process import ProcessEnd
from zl_core.cells.cell_process import strip_ansi as strip_ansi

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
from zl_core.interface.provider import CellCommand, CellRequest, Provider
from zl_core.interface.rows import LOG_NAME
from zl_core.plugins.host import PluginHost

logger = logging.getLogger(__name__)  # "log" is the cell's run.log below

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

    The steps: nothing starts while the campaign ends; the preflight; what the cell starts
    with (command, environment, identity, a warm start); its process
    (:mod:`zl_core.cells.cell_process`); its folder tidied; its end recorded.
    """
    _refuse_while_ending()
    cell = prepare_cell_dir(Path(request.out_dir), fresh=fresh_dir)
    start = time.time()
    device_identity = _preflight(host, provider, request, cell, start)
    preflight_s = time.time() - start
    launch = _launch(host, provider, request, device_identity)
    caliber.write_identity(cell, launch.identity)
    ended = cell_process.run_process(
        request, cell, cell / LOG_NAME, launch.command, launch.env,
        zygote_socket=None if launch.zygote is None else launch.zygote.socket_path, echo=echo, say=say)
    end = time.time()
    _tidy(cell, stalled=ended.stalled)
    return _finish(provider, cell, ended, start=start, end=end, preflight_s=preflight_s)


def _refuse_while_ending() -> None:
    signum = interrupts.requested()
    if signum is not None:  # the campaign is ending: start nothing new
        raise interrupts.Interrupted(signum)


def _preflight(host: PluginHost, provider: Provider, request: CellRequest, cell: Path,
               start: float) -> dict:
    """The provider's checks, then the device's identity as its vendor's tool gives it
    (none for a compile-only cell). A failed check is written into the cell's run.log and
    identity before it is raised."""
    try:
        provider.preflight(request, host)
        return {} if request.compile_only else identify_device(host, request)
    except PreflightError as exc:
        (cell / LOG_NAME).write_text(str(exc) + "\n", encoding="utf-8")
        spent = time.time() - start
        caliber.write_identity(cell, {"schema": 1, "op": request.op.op, "side": request.side,
                                      "preflight_failed": exc.check, "rc": 3,
                                      phases.KEY: phases.assemble(wall_s=spent, preflight_s=spent,
                                                                  spawned=None, exited=None,
                                                                  cell=None, window=(start, start + spent))})
        raise


@attrs.frozen(kw_only=True)
class _Launch:
    """What a cell starts with."""

    command: CellCommand
    env: dict[str, str]  # the whole environment
    identity: dict  # written before it starts
    zygote: warmstart.Zygote | None  # a warm cell's parent; None: it starts cold


def _launch(host: PluginHost, provider: Provider, request: CellRequest, device_identity: dict) -> _Launch:
    """The cell's command (the provider's), its whole environment, the identity written
    before it starts and, for a warm cell, the zygote it forks from (or why it starts cold)."""
    command = provider.cell_command(request, host)
    prepared = environment(host, request, extra=dict(command.env), unset=command.unset,
                           compiler=compiler_spec(provider, request.backend))
    logger.debug("cell %s %s on %s:%s in %s: %s; side variables: %s", request.op.op, request.side or "-",
                 request.backend.name, request.device, command.cwd, shlex.join(command.argv), request.env)
    identity = initial_identity(host, request, provider, dict(command.identity), device_identity,
                                compiler_identity(request, command, prepared))
    zygote = None
    if request.start == "warm":
        zygote, note = warmstart.for_cell(provider.warm_plan(request), provider.name, request.python,
                                          command.argv, prepared.env, request.env)
        identity.update({"start": "warm" if zygote else "cold",
                         "warm_modules": list(zygote.imported) if zygote else [],
                         **({"start_note": note} if note else {})})
    return _Launch(command=command, env=prepared.env, identity=identity, zygote=zygote)


def _tidy(cell: Path, *, stalled: bool) -> None:
    """The cell's scratch removed: its caches, its progress beat, the gate-wait file of a
    cell killed while it waited, and a stacks file no stall asked for."""
    for cache in (TRITON_CACHE, TUNER_CACHE):
        shutil.rmtree(cell / cache, ignore_errors=True)
    (cell / PROGRESS_FILE).unlink(missing_ok=True)
    (cell / contract.GATE_WAIT_FILE).unlink(missing_ok=True)
    (cell / contract.GATE_TAKEN_FILE).unlink(missing_ok=True)
    stacks = cell / STACKS_FILE
    if not stalled and stacks.is_file() and stacks.stat().st_size == 0:
        stacks.unlink()  # armed, never asked: no file says "stacks" without any


def _finish(provider: Provider, cell: Path, ended: ProcessEnd, *, start: float, end: float,
            preflight_s: float) -> CellOutcome:
    """The cell's rows counted and its end merged into its identity; then its outcome, or,
    for a cell the campaign's interruption or a disk fault ended, no outcome to judge
    (:class:`~zl_core.foundation.interrupts.Interrupted`, :class:`CellDiskError`)."""
    success, failed, rows_error, skips = count_results(provider, cell)
    if rows_error:
        with open(cell / LOG_NAME, "a", encoding="utf-8") as log:
            log.write(f"zl: {rows_error}\n")
    signum = interrupts.requested()
    disk = disk_fault(cell / LOG_NAME) if ended.rc != 0 and not ended.timed_out and signum is None else ""
    own = (caliber.read_identity(cell) or caliber.CellIdentity()).cell_phases
    if ended.gate is not None:  # the orchestrator's hold is the cell's
        own = {**(own or {}), timing_gate.KEY: ended.gate}
    # An interrupted cell is not finished: a resumed campaign moves it aside and reruns it.
    # So is one that a full or read-only disk stopped: that is no verdict on the code.
    how = ({"interrupted": signal.Signals(signum).name} if signum else
           {"interrupted": "disk", "disk_fault": disk} if disk else {"finished": _now_iso()})
    caliber.merge_identity(cell, {
        "rc": ended.rc, "timed_out": ended.timed_out, "stalled": ended.stalled,
        "elapsed_s": round(end - start, 3), "longest_silence_s": round(ended.longest_silence_s, 1),
        **({"stacks": STACKS_FILE} if ended.stalled and (cell / STACKS_FILE).is_file() else {}),
        phases.KEY: phases.assemble(wall_s=end - start, preflight_s=preflight_s, spawned=ended.spawned,
                                    exited=ended.exited, cell=own, window=(start, end)),
        **how, "markers": ended.markers, "success_rows": success, "failed_rows": failed,
        **({"rows_error": rows_error} if rows_error else {}),
        **({"skips": list(skips)} if skips else {}),
    })
    if signum is not None:  # killed by the campaign's interruption: no outcome to report
        raise interrupts.Interrupted(signum)
    if disk:
        raise CellDiskError(cell, disk)
    return CellOutcome(cell_dir=cell, rc=ended.rc, timed_out=ended.timed_out, stalled=ended.stalled,
                       elapsed_s=round(end - start, 3),  # as recorded: a kept cell reads the same
                       start=start, end=end, markers=ended.markers, success_rows=success,
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
