"""The warm-start parent: imports a provider's heavy modules once, then forks one child per cell.

Started by :mod:`zl_core.cells.warmstart` as ``python -m zl_core.cells.zygote``. It imports the
modules it was given, in order, while recording every environment variable Python code
reads, and checks that the imports left the device driver untouched (a driver started
in the parent does not survive a fork). It then prints one JSON line (the readiness
report) and serves requests on a Unix socket, one connection per cell:

* the guard of a cell (:mod:`zl_core.cells.cellguard`) sends the cell's ``argv`` (which must be
  ``[this interpreter, "-m", module, ...]`` or ``[this interpreter, script, ...]``), its
  working directory and its whole environment, and passes its output and device-lock
  descriptors along;
* the zygote forks. The child starts a session of its own, takes those descriptors as
  its stdin/stdout/stderr, replaces its environment with the cell's, moves to the cell's
  directory and runs the module (or script) as the interpreter would. It ends itself when the guard's end of
  the connection closes, so no warm cell outlives its guard;
* the zygote sends ``{"pid": N}``, then ``{"exit": code}`` once it has reaped the child.

Single-threaded on purpose: forking a process with threads can leave the child a lock
some other thread held. The zygote ends when the orchestrator does (the watchdog pipe
of :mod:`zl_core.cells.cellguard` reaches end-of-file), or after SIGTERM once the cells it
forked have ended (it takes no new one).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
import time
import typing

HEADER = struct.Struct("!I")
MAX_FDS = 4
_STDOUT, _HOLD = 0, 1  # order of the descriptors a request passes


# Its base is os.environ's own class (the private os._Environ), which mypy cannot take
# from type(): a base it cannot see is its misc error.
class _RecordingEnviron(type(os.environ)):  # type: ignore[misc]
    """os.environ that remembers which names Python code asked for while imports run."""

    reads: typing.ClassVar[set[str]] = set()

    def __getitem__(self, key):
        _RecordingEnviron.reads.add(str(key))
        return super().__getitem__(key)

    def __contains__(self, key):
        _RecordingEnviron.reads.add(str(key))
        return super().__contains__(key)


#: torch's device namespaces that start no driver.
_NO_DRIVER = frozenset({"cpu"})


def _driver_state() -> str:
    """"untouched", or which of torch's device modules the imports initialised.

    torch's own flag, not the loaded libraries: importing torch maps libcuda without
    starting it (docs/validation/2026-12-04-h200-throughput.md)."""
    torch = sys.modules.get("torch")
    # Every device module of torch, whichever vendor's extension added it (torch.cuda,
    # torch.musa, torch.npu, ...): one that counts devices and knows if it started
    # (torch.distributed knows the second only, and is no device). torch.cpu counts one
    # device and says it started from the moment torch imports (torch 2.11): no driver,
    # so it never keeps torch out of the warm parent.
    for name, module in sorted(vars(torch).items()) if torch is not None else ():
        if name in _NO_DRIVER:
            continue
        started = getattr(module, "is_initialized", None)
        if callable(getattr(module, "device_count", None)) and callable(started) and started():
            return f"torch.{name} initialised"
    return "untouched"


def preload(modules: list[str]) -> dict:
    """Import ``modules`` in order. One that fails is left out (the cell imports it itself,
    as a cold one would); the first that starts the device driver ends the list."""
    report: dict = {"imported": [], "seconds": {}, "left_out": {}, "env_read": [],
                    "stopped_at": None, "driver": "untouched"}
    original = os.environ.__class__
    os.environ.__class__ = _RecordingEnviron
    try:
        for name in modules:
            start = time.perf_counter()
            try:
                __import__(name)
            except Exception as exc:  # noqa: BLE001 - reported; the cells import it themselves
                report["left_out"][name] = f"{type(exc).__name__}: {exc}"
                continue
            report["seconds"][name] = round(time.perf_counter() - start, 3)
            state = _driver_state()
            if state != "untouched":
                report.update(stopped_at=name, driver=state)
                break
            report["imported"].append(name)
    finally:
        os.environ.__class__ = original
    report["env_read"] = sorted(_RecordingEnviron.reads)
    return report


# -- the child ---------------------------------------------------------------------------


def _watch_guard(conn: socket.socket) -> None:
    """End this process group when the guard's end of the connection closes."""
    import threading

    def watch() -> None:
        try:
            while conn.recv(1):
                pass
        except OSError:
            pass  # a broken connection is the guard gone, as end-of-file is
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="zl-guard-watch", daemon=True).start()


def _run(argv: list[str]) -> int:
    """Run ``argv`` (``[python, "-m", module, ...]`` or ``[python, script, ...]``) as the
    interpreter would have, in this process; its exit code."""
    import runpy

    try:
        if argv[1] == "-m":
            sys.argv = [argv[2], *argv[3:]]  # runpy puts the module's path in argv[0]
            sys.path[0] = os.getcwd()  # as ``python -m`` sets it
            runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv[1:])
            sys.path[0] = os.path.dirname(os.path.realpath(argv[1]))  # as ``python script`` does
            runpy.run_path(argv[1], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the interpreter prints it, then ends by SIGINT itself
        import traceback

        traceback.print_exc()
        return -signal.SIGINT
    except BaseException:  # noqa: BLE001 - printed as the interpreter would, then exit 1
        import traceback

        traceback.print_exc()
        return 1
    return 0


def _child(conn: socket.socket, listener: socket.socket, request: dict, fds: list[int]) -> None:
    """Become the cell. Never returns."""
    code = 1
    try:
        listener.close()
        os.setsid()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(fds[_STDOUT], 1)
        os.dup2(fds[_STDOUT], 2)
        os.close(devnull)
        os.close(fds[_STDOUT])  # the device lock (fds[_HOLD]) stays open for the cell's life
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _watch_guard(conn)
        code = _run(request["argv"])
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing left to say
                stream.flush()
        if code < 0:  # end by that signal, as a cold interpreter does
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code)


# -- the client (a cell's guard, zl_core.cells.cellguard) ------------------------------------------


def request_cell(socket_path: str, argv: list[str], cwd: str, stdout_fd: int,
                 hold_fd: int | None) -> socket.socket:
    """Ask the zygote for a cell (the guard's side); returns the open connection.

    The request's two halves (this and :func:`_read_request`) live in one module."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(socket_path)
    body = json.dumps({"argv": list(argv), "cwd": cwd, "env": dict(os.environ)}).encode()
    fds = [stdout_fd] + ([] if hold_fd is None else [hold_fd])
    socket.send_fds(conn, [HEADER.pack(len(body))], fds)
    conn.sendall(body)
    return conn


# -- the server --------------------------------------------------------------------------


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, HEADER.size, MAX_FDS)
    if len(head) != HEADER.size:
        raise ValueError("short request header")
    (size,) = HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("request cut short")
        body += chunk
    return json.loads(body), list(fds)


def _send(conn: socket.socket, payload: dict) -> None:
    try:
        conn.sendall((json.dumps(payload) + "\n").encode())
    except OSError:
        pass  # the guard is gone; the child ends itself


class _Drain(Exception):
    """SIGTERM: take no new cell, end once the running ones have."""


def _drain(_signum, _frame) -> None:
    raise _Drain


def serve(listener: socket.socket, watch_fd: int) -> None:
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    accepting = True
    signal.signal(signal.SIGTERM, _drain)
    while accepting or children:
        try:
            ready, _, _ = select.select([listener] * accepting + [watch_fd, *children], [], [])
        except _Drain:
            accepting = False
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            continue
        if watch_fd in ready and not os.read(watch_fd, 1):
            return  # the orchestrator is gone (and with it every guard and so every cell)
        for pidfd in [fd for fd in ready if fd in children]:
            pid, conn = children.pop(pidfd)
            _, status = os.waitpid(pid, 0)
            os.close(pidfd)
            _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
            conn.close()
        if accepting and listener in ready:
            conn, _ = listener.accept()
            try:
                request, fds = _read_request(conn)
            except (OSError, ValueError) as exc:
                _send(conn, {"error": f"bad request: {exc}"})
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                _child(conn, listener, request, fds)
            for fd in fds:
                os.close(fd)
            children[os.pidfd_open(pid)] = (pid, conn)
            _send(conn, {"pid": pid})


def main(argv: list[str]) -> None:
    # argv: socket path, watchdog descriptor, the modules to import
    path, watch_fd = argv[0], int(argv[1])
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    report = preload(argv[2:])
    # What the imports built lives as long as every cell: out of the cells' collections
    # (a full one over torch's and Triton's objects is a tenth of a second), and their
    # pages never copied by a collection touching them after a fork.
    gc.collect()
    gc.freeze()
    report["frozen_objects"] = gc.get_freeze_count()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    report["pid"] = os.getpid()
    print(json.dumps(report), flush=True)
    serve(listener, watch_fd)


if __name__ == "__main__":
    main(sys.argv[1:])
