"""Warm starts: a cell forked from a parent that already imported the provider's modules.

A cold cell is ``python -m <module> ...`` in a new interpreter. A warm cell runs the same
module in a child forked from a :mod:`zl_core.cells.zygote`, which paid the imports once; the
child still is a process of its own, with the cell's whole environment, its own caches
and the side's switch value set before anything compiles.

That is only the same cell when nothing the zygote imported depends on what differs
between cells. So a zygote is kept per interpreter, module list and base environment
(the cell's environment less what differs per cell or per side), and a cell may start
warm only when

* its command is ``[that interpreter, "-m", module, ...]`` or ``[that interpreter, script, ...]``;
* the imports left the device driver untouched (the zygote stops at the module that
  started it, and zl starts a new one with the modules before it);
* no variable the imports read (:attr:`Zygote.env_read`, Python-level reads) differs
  between the cell's environment and the zygote's.

:func:`cold_reason` answers the last two for a cell; the campaign asks it once per side
before any cell runs, so every cell of one campaign starts the same way.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from zl_core.cells import cellguard
from zl_core.foundation.errors import UsageError
from zl_core.interface import contract
from zl_core.interface.provider import WarmPlan

#: Variables that differ per cell whatever the provider (the core writes them).
PER_CELL = ("TRITON_CACHE_DIR", *contract.CORE_WRITES, *contract.PROVIDER_WRITES)
READY_TIMEOUT_S = 300.0
#: Zygotes one process keeps (one per interpreter and base environment: a lane's device
#: is part of it); the longest unused is ended beyond that, e.g. in a long-lived worker.
MAX_ZYGOTES = 8


def base_environment(cell_env: Mapping[str, str], plan: WarmPlan, side_env: Mapping[str, str],
                     caller_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The zygote's environment for a cell: the cell's, with every per-cell and per-side
    variable as the caller has it (or absent)."""
    caller = os.environ if caller_env is None else caller_env
    base = dict(cell_env)
    for key in (*PER_CELL, *plan.per_cell, *side_env):
        if key in caller and key not in contract.CORE_WRITES and key not in contract.PROVIDER_WRITES:
            base[key] = caller[key]
        else:
            base.pop(key, None)
    base["PYTHONUNBUFFERED"] = "1"
    return base


class Zygote:
    """One running zygote (start it with :func:`zygote_for`)."""

    def __init__(self, python: str, modules: tuple[str, ...], env: Mapping[str, str]) -> None:
        self.python, self.modules, self.env = python, modules, dict(env)
        self._dir = Path(tempfile.mkdtemp(prefix="zl-zyg-"))
        self.socket_path = str(self._dir / "s")
        self._log = open(self._dir / "zygote.log", "w+b")  # noqa: SIM115 - kept for the zygote's life
        watch = cellguard.watch_fd()
        argv = [python, "-m", "zl_core.cells.zygote", self.socket_path, str(watch), *modules]
        self._proc = subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE, stderr=self._log,
                                      stdin=subprocess.DEVNULL, pass_fds=(watch,),
                                      start_new_session=True, cwd=str(self._dir))
        self.report = self._ready()

    def _ready(self) -> dict:
        stdout = self._proc.stdout
        assert stdout is not None
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(READY_TIMEOUT_S)
        try:
            report = json.loads(line[0]) if line and line[0] else None
        except ValueError:
            report = None
        if not isinstance(report, dict):
            self.close()
            self._log.seek(0)
            tail = self._log.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            raise UsageError("warm start: the zygote did not start ("
                             + (tail[0] if tail else "no output") + "); use --start cold")
        return report

    @property
    def imported(self) -> tuple[str, ...]:
        return tuple(self.report.get("imported", ()))

    @property
    def env_read(self) -> frozenset[str]:
        return frozenset(self.report.get("env_read", ()))

    @property
    def stopped(self) -> str:
        """Why the module list was cut short ("" when every module was imported)."""
        name = self.report.get("stopped_at")
        return f"importing {name} started the device driver ({self.report.get('driver')})" if name else ""

    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self, *, wait: bool = True) -> None:
        """End the zygote: it takes no new cell and exits once its running cells have.
        ``wait=False`` leaves it to finish them (a thread reaps it)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            if not wait:
                threading.Thread(target=self._proc.wait, daemon=True).start()
            else:
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)


_lock = threading.Lock()
_zygotes: dict[tuple, Zygote] = {}
_notes: dict[tuple, str] = {}  # what each zygote had to leave out, said once


def supported() -> str:
    """"" when this platform can fork warm cells, else why not."""
    if not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return "warm starts need Linux (pidfd_open) and Python >= 3.9"
    return ""


def zygote_for(python: str, plan: WarmPlan, env: Mapping[str, str]) -> Zygote:
    """The running zygote for these modules and this environment, started if needed.

    A module that starts the device driver cannot stay: a zygote that stopped at one is
    replaced by one that imports the others (:func:`left_out` says which and why)."""
    key = (python, plan.modules, tuple(sorted(env.items())))
    with _lock:
        zygote = _zygotes.pop(key, None)
        if zygote is not None and zygote.alive():
            _zygotes[key] = zygote  # the most recently used last
            return zygote
        modules, notes = list(plan.modules), []
        zygote = Zygote(python, tuple(modules), env)
        while zygote.stopped:  # each restart drops one module, so this ends
            notes.append(zygote.stopped)
            modules.remove(zygote.report["stopped_at"])
            zygote.close()
            zygote = Zygote(python, tuple(modules), env)
        _notes[key] = "; ".join(notes)
        _zygotes[key] = zygote
        while len(_zygotes) > MAX_ZYGOTES:
            _zygotes.pop(next(iter(_zygotes))).close(wait=False)
        return zygote


def left_out(python: str, plan: WarmPlan, env: Mapping[str, str]) -> str:
    """The module the zygote for this key could not keep, and why ("" when none)."""
    return _notes.get((python, plan.modules, tuple(sorted(env.items()))), "")


def cold_reason(zygote: Zygote, argv: tuple[str, ...] | list[str], cell_env: Mapping[str, str]) -> str:
    """Why this cell cannot start from ``zygote`` ("" when it can)."""
    runs = (len(argv) >= 3 and argv[1] == "-m") or (len(argv) >= 2 and not argv[1].startswith("-"))
    if not runs or argv[0] != zygote.python:
        return "its command is not '<the interpreter> -m <module> ...' or '<the interpreter> <script> ...'"
    differ = sorted(key for key in zygote.env_read if cell_env.get(key) != zygote.env.get(key))
    if differ:
        return ("importing " + ", ".join(zygote.imported) + " reads " + ", ".join(differ)
                + ", which the cells do not share")
    return ""


def for_cell(plan: WarmPlan | None, provider: str, python: str, argv, cell_env: Mapping[str, str],
             side_env: Mapping[str, str]) -> tuple[Zygote | None, str]:
    """The zygote this cell forks from, or None and why it starts cold."""
    if plan is None:
        return None, f"the {provider} provider's cells start cold only"
    why = supported()
    if why:
        return None, why
    base = base_environment(cell_env, plan, side_env)
    zygote = zygote_for(python, plan, base)
    reason = cold_reason(zygote, argv, cell_env)
    return (None, reason) if reason else (zygote, left_out(python, plan, base))


def close_all() -> None:
    with _lock:
        for zygote in _zygotes.values():
            zygote.close()
        _zygotes.clear()


atexit.register(close_all)
