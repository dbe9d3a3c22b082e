"""A real Dask scheduler and ``zl worker`` processes on 127.0.0.1 for tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

FAKES = Path(__file__).with_name("fake_lanes")
LAUNCHER = FAKES / "zl_fake_lanes.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update({"PATH": f"{FAKES / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                "ZL_FAKE_LEDGER": str(tmp_path / "ledger.tsv"), "ZL_BACKEND": "cuda",
                "DASK_DISTRIBUTED__WORKER__DAEMON": "False",
                # The scheduler unpickles task records too: the test suite's module must import.
                "PYTHONPATH": os.pathsep.join(p for p in (str(FAKES), env.get("PYTHONPATH")) if p)})
    return env


def _wait_for_workers(address: str, count: int, timeout: float = 60.0) -> None:
    from distributed import Client

    with Client(address, timeout=timeout) as client:
        client.wait_for_workers(count, timeout=timeout)


@contextmanager
def cluster(tmp_path: Path, worker_devices: list[str], *, lock_dirs: list[Path] | None = None):
    """A scheduler and one ``zl worker`` per entry of ``worker_devices``; yields (address, workers).

    Each worker may get its own lock folder, standing for a host of its own.
    """
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = worker_env(tmp_path)
    fds: list[int] = []

    def log_fd(path: Path) -> int:
        fds.append(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        return fds[-1]

    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                              stderr=log_fd(tmp_path / "scheduler.log"))]
    workers = []
    try:
        for n, devices in enumerate(worker_devices):
            wenv = dict(env)
            if lock_dirs:
                wenv["ZL_LOCK_DIR"] = str(lock_dirs[n])
            proc = subprocess.Popen([sys.executable, str(LAUNCHER), "worker", "--scheduler", address,
                                     "--devices", devices, "--name", f"w{n}"], env=wenv,
                                    stdout=log_fd(tmp_path / f"worker{n}.log"),
                                    stderr=subprocess.STDOUT)
            workers.append(proc)
        procs.extend(workers)
        _wait_for_workers(address, len(worker_devices))
        yield address, workers
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for fd in fds:
            os.close(fd)
