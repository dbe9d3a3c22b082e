"""One lock per physical device, shared by every zl process of a user on a host.

The lock is an ``flock`` on ``<lock dir>/<backend>-<device>.lock``. An flock
belongs to the open file description, so when the orchestrator passes the
descriptor to a cell (``pass_fds``) the cell holds the device too: an orphaned
cell of a dead orchestrator still keeps other cells off its device until it
exits, and the kernel drops the lock the moment the last holder dies (no stale
lock files to clean up).

The lock directory is ``$ZL_LOCK_DIR``, else ``/tmp/zl-locks-<uid>``: one folder per user
and host whatever the process's ``TMPDIR`` or ``XDG_RUNTIME_DIR`` (a batch job and a login
shell of the same user see different ones, and two folders would let them time one device
at once). Being in a folder every user can write to, it is used only when it is this
user's own and nobody else can write into it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from zl_core.foundation.errors import DeviceBusyError, UsageError
from zl_core.interface.ttgir_layout import safe_component

LOCK_DIR_ENV = "ZL_LOCK_DIR"
POLL_S = 0.2
#: How often a wait for a busy device says it is still waiting.
TELL_EVERY_S = 60.0

# Locks this process holds, so a cell started here reuses its lane's hold (a second
# flock on the same file from this process would wait for ourselves).
_held: dict[tuple[str, str], DeviceLock] = {}
_held_lock = threading.Lock()


#: Where the default lock folder goes: the host's, never the process's temporary folder.
SHARED_TMP = Path("/tmp")


def lock_dir() -> Path:
    explicit = os.environ.get(LOCK_DIR_ENV)
    if explicit:
        return Path(explicit)
    return SHARED_TMP / f"zl-locks-{os.getuid()}"


def _check_owned(path: Path, where: str) -> None:
    """The default folder sits in /tmp: another user could have made it (or a link in its
    place) to hold or watch this user's device locks."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise UsageError(f"{where} is a symbolic link; remove it, or set ${LOCK_DIR_ENV} to a folder "
                         "of your own")
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise UsageError(f"{where} belongs to another user or others can write into it; remove it, "
                         f"or set ${LOCK_DIR_ENV} to a folder of your own")


def check_lock_dir() -> Path:
    """The lock folder, made if missing; a :class:`~zl_core.foundation.errors.UsageError` naming it
    when it cannot hold locks (a file in its place, no permission), before any cell runs
    (a full disk is not the cause, so the runs root's hint would send the user astray)."""
    path = lock_dir()
    where = f"the device-lock folder {path}" + (f" (${LOCK_DIR_ENV})" if os.environ.get(LOCK_DIR_ENV) else "")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{where} is a file, not a folder; remove it or set ${LOCK_DIR_ENV} to a folder")
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise UsageError(f"{where} cannot be made: {exc.strerror or exc}; set ${LOCK_DIR_ENV} to a "
                         "folder this user can write") from None
    if not os.environ.get(LOCK_DIR_ENV):
        _check_owned(path, where)
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{where} is not writable by this user; set ${LOCK_DIR_ENV} to one that is")
    return path


def lock_path(backend: str, device: str) -> Path:
    return lock_dir() / f"{safe_component(backend)}-{safe_component(str(device))}.lock"


def gate_path(backend: str, device: str) -> Path:
    """The device's timing gate (:mod:`zl_core.interface.timing_gate`), beside its lock."""
    return lock_dir() / f"{safe_component(backend)}-{safe_component(str(device))}.timing"


class DeviceLock:
    """An exclusive hold on one device; ``fd`` is what a cell inherits."""

    def __init__(self, backend: str, device: str) -> None:
        self.backend, self.device = backend, str(device)
        self.path = lock_path(backend, self.device)
        self.fd: int | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never waits."""
        if self.fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        with _held_lock:
            _held[(self.backend, self.device)] = self
        return True

    def acquire(self, *, timeout_s: float | None = None,
                on_wait: Callable[[str], None] | None = None) -> bool:
        """Wait for the lock (forever, or ``timeout_s``); ``on_wait`` hears who holds it when
        the wait starts and every :data:`TELL_EVERY_S` after, with the time waited."""
        started = time.monotonic()
        deadline = None if timeout_s is None else started + timeout_s
        told = None
        while not self.try_acquire():
            now = time.monotonic()
            if on_wait is not None and (told is None or now - told >= TELL_EVERY_S):
                bound = "" if deadline is None else f" (up to {timeout_s:g}s, --lock-timeout)"
                waited = "" if told is None else f" for {now - started:.0f}s"
                on_wait(f"device {self.backend}:{self.device} is busy ({self.holder()}); "
                        f"waiting{waited}{bound}")
                told = now
            if deadline is not None and now >= deadline:
                return False
            time.sleep(POLL_S)
        return True

    def holder(self) -> str:
        """Who wrote the lock file last (the process that took it), for messages."""
        try:
            pid = self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return "holder unknown"
        return f"held by pid {pid}" if pid else "holder unknown"

    def release(self) -> None:
        if self.fd is not None:
            with _held_lock:
                _held.pop((self.backend, self.device), None)
            os.close(self.fd)  # cells that inherited the descriptor keep holding the device
            self.fd = None



def held(backend: str, device: str) -> DeviceLock | None:
    """The lock this process already holds on the device, if any."""
    with _held_lock:
        return _held.get((backend, str(device)))


@contextlib.contextmanager
def holding(backend: str, device: str | None, *, on_wait: Callable[[str], None] | None = None,
            timeout_s: float | None = None):
    """The device's lock for a block: this process's own hold, or a new one taken (waiting
    up to ``timeout_s``, None or 0 for ever; :class:`DeviceBusyError` past it)."""
    if device is None:
        yield None
        return
    own = held(backend, device)
    if own is not None:
        yield own
        return
    lock = DeviceLock(backend, device)
    if not lock.acquire(on_wait=on_wait, timeout_s=timeout_s or None):
        raise DeviceBusyError(f"device {backend}:{device} stayed busy ({lock.holder()}) for "
                              f"{timeout_s:g}s (--lock-timeout); wait for that process, or pick "
                              "another device")
    try:
        yield lock
    finally:
        lock.release()
