"""The warm-start parent: imports a provider's heavy modules once, then forks one child per cell.

Started by :mod:`zl_core.warmstart` as ``python -m zl_core.zygote``. It imports the
modules it was given, in order, while recording every environment variable Python code
reads, and checks that the imports left the device driver untouched (a driver started
in the parent does not survive a fork). It then prints one JSON line (the readiness
report) and serves requests on a Unix socket, one connection per cell:

* the guard of a cell (:mod:`zl_core.cellguard`) sends the cell's ``argv`` (which must be
  ``[this interpreter, "-m", module, ...]``), its working directory and its whole
  environment, and passes its output and device-lock descriptors along;
* the zygote forks. The child starts a session of its own, takes those descriptors as
  its stdin/stdout/stderr, replaces its environment with the cell's, moves to the cell's
  directory and runs the module as ``-m`` would. It ends itself when the guard's end of
  the connection closes, so no warm cell outlives its guard;
* the zygote sends ``{"pid": N}``, then ``{"exit": code}`` once it has reaped the child.

Single-threaded on purpose: forking a process with threads can leave the child a lock
some other thread held. The zygote ends when the orchestrator does (the watchdog pipe
of :mod:`zl_core.cellguard` reaches end-of-file) or on SIGTERM.
"""

from __future__ import annotations

import contextlib
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


class _RecordingEnviron(type(os.environ)):  # type: ignore[misc]
    """os.environ that remembers which names Python code asked for while imports run."""

    reads: typing.ClassVar[set[str]] = set()

    def __getitem__(self, key):
        _RecordingEnviron.reads.add(str(key))
        return super().__getitem__(key)

    def __contains__(self, key):
        _RecordingEnviron.reads.add(str(key))
        return super().__contains__(key)


def _driver_state(libraries: list[str]) -> str:
    """"untouched", or what shows the driver was started by the imports."""
    torch = sys.modules.get("torch")
    for name in ("cuda", "musa", "npu", "xpu"):
        module = getattr(torch, name, None) if torch is not None else None
        started = getattr(module, "is_initialized", None)
        if callable(started) and started():
            return f"torch.{name} initialised"
    if libraries:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            mapped = maps.read()
        for library in libraries:
            if library in mapped:
                return f"{library} loaded"
    return "untouched"


def preload(modules: list[str], libraries: list[str]) -> dict:
    """Import ``modules`` in order; stop at the first that fails or starts the driver."""
    report: dict = {"imported": [], "seconds": {}, "env_read": [], "driver": "untouched",
                    "stopped_at": None, "error": None}
    original = os.environ.__class__
    os.environ.__class__ = _RecordingEnviron
    try:
        for name in modules:
            start = time.perf_counter()
            try:
                __import__(name)
            except BaseException as exc:  # noqa: BLE001 - reported; the zygote is not used
                report.update(stopped_at=name, error=f"{type(exc).__name__}: {exc}")
                break
            report["seconds"][name] = round(time.perf_counter() - start, 3)
            state = _driver_state(libraries)
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
            pass
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="zl-guard-watch", daemon=True).start()


def _run_module(argv: list[str]) -> int:
    import runpy

    module = argv[2]
    sys.argv = [module, *argv[3:]]  # runpy puts the module's path in argv[0]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
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
        sys.path[0] = os.getcwd()  # as ``python -m`` sets it, in the cell's directory
        _watch_guard(conn)
        code = _run_module(request["argv"])
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing left to say
                stream.flush()
        os._exit(code)


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


def serve(listener: socket.socket, watch_fd: int) -> None:
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    while True:
        ready, _, _ = select.select([listener, watch_fd, *children], [], [])
        if watch_fd in ready and not os.read(watch_fd, 1):
            return  # the orchestrator is gone
        for pidfd in [fd for fd in ready if fd in children]:
            pid, conn = children.pop(pidfd)
            _, status = os.waitpid(pid, 0)
            os.close(pidfd)
            _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
            conn.close()
        if listener in ready:
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
    # argv: socket path, watchdog fd, then --driver-lib NAME ... -- module ...
    path, watch_fd = argv[0], int(argv[1])
    split = argv.index("--")
    libraries = [argv[i + 1] for i in range(2, split) if argv[i] == "--driver-lib"]
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    report = preload(argv[split + 1:], libraries)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    report["pid"] = os.getpid()
    print(json.dumps(report), flush=True)
    serve(listener, watch_fd)


if __name__ == "__main__":
    main(sys.argv[1:])
