"""A cell's process, from its start to its end: started under its guard with the device's
lock (and, for a pipelined cell without timing phases, inside its device's timing gate),
its output written ANSI-free into ``run.log`` with its markers counted, and its process
group ended at the cell's timeout or when it stalls."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO

import attrs

from zl_core.cells import cell_setup, cellguard, devicelock, liveness
from zl_core.foundation import interrupts
from zl_core.interface import contract, timing_gate
from zl_core.interface.provider import CellCommand, CellRequest

MARKERS = contract.MARKERS
_MARKER_RE = re.compile(r"(?:^|\s)(" + "|".join(MARKERS) + r")(?=\s|$)")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
EXIT_TIMEOUT = 124
#: The exit code reported for a cell that stalled (killed by zl; no process exits so).
EXIT_STALLED = 125
#: Seconds a stalled cell gets to write its Python stacks before its group is killed.
STACKS_GRACE_S = 3.0
POLL_S = 0.5
KILL_GRACE_S = 5.0


def strip_ansi(text: str) -> str:
    return _ANSI_RE.sub("", text)


@attrs.frozen(kw_only=True)
class ProcessEnd:
    """How a cell's process ended, and when (epoch seconds)."""

    rc: int  # EXIT_STALLED / EXIT_TIMEOUT where zl ended it
    timed_out: bool  # a stall counts as a timeout too
    stalled: bool
    spawned: float
    exited: float
    markers: dict[str, int]
    longest_silence_s: float
    #: The timing gate's record where the cell ran whole inside it (None: it did not).
    gate: Mapping[str, object] | None = None


def run_process(request: CellRequest, cell: Path, log_path: Path, command: CellCommand,
                env: Mapping[str, str], *, zygote_socket: str | None,
                echo: Callable[[str], None] | None, say: Callable[[str], None] | None) -> ProcessEnd:
    """Run the cell's command to its end, its output into ``log_path``."""
    markers = dict.fromkeys(MARKERS, 0)
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
        proc = cellguard.spawn(command.argv, cwd=command.cwd, env=dict(env), stdout=subprocess.PIPE,
                               hold_fd=None if lock is None else lock.fd, zygote=zygote_socket)
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
                      f"Python stacks in {cell / contract.STACKS_FILE}; process group killed\n")
        elif timed_out:
            log.write(f"CELL_TIMEOUT after {request.timeout_s:g}s: process group killed\n")
    return ProcessEnd(rc=EXIT_STALLED if stalled else EXIT_TIMEOUT if timed_out else proc.returncode,
                      timed_out=timed_out, stalled=stalled, spawned=spawned, exited=exited,
                      markers=markers, longest_silence_s=watch.longest_silence_s,
                      gate=None if whole is None else whole.record())


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


def _say(log: IO[str], *listeners: Callable[[str], None] | None) -> Callable[[str], None]:
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


def _pump(proc: subprocess.Popen, log: IO[str], markers: dict[str, int],
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
