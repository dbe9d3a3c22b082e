"""Helpers for backend plugins: ask the vendor's tool, read the runtime's errors.

Part of the public surface for backend authors (zl-backend-* packages and
third-party backends may import only ``zl_core``)::

    from zl_core.foundation.vendor_tools import answers_for, classify_by_markers, run_tool

    @hookimpl
    @answers_for(BACKEND)  # other backends' calls get None without running the body
    def zl_enumerate_devices(backend, explicit): ...

    out = run_tool(["example-smi", "--list"], timeout_s=15)
    if out is None:
        return None  # no tool, or it failed: let zl fall back

    return classify_by_markers(exc, fatal=("example error: bad address",))

A hook that asks the tool something should answer None when the tool cannot
tell, never raise: a missing or broken tool is a normal state of a machine.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any

from zl_core.foundation import interrupts

__all__ = ["answers_for", "check_tool", "classify_by_markers", "run_tool"]

#: How long a tool that ran past its timeout is not run again in this process. One command
#: asks the vendor's tool several times (devices, identity, why none answered): a hung
#: nvidia-smi otherwise makes it wait each timeout out in turn before it says why. Short,
#: as a campaign's orchestrator asks for every cell: a tool that recovers is asked again.
HUNG_MEMORY_S = 60.0
_hung: dict[str, tuple[float, float]] = {}  # the tool's path -> (monotonic time, its timeout)


def answers_for(backend: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for a backend-taking hook (its first parameter is the ``Backend``): it
    answers None for every other backend, so a vendor plugin's hooks need no guard of
    their own. The hook keeps its signature (pluggy reads the parameter names)."""
    name = backend.name

    def decorate(hook: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(hook)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            target = args[0] if args else kwargs.get("backend")
            return hook(*args, **kwargs) if getattr(target, "name", None) == name else None
        return guarded
    return decorate


def run_tool(argv: Sequence[str], timeout_s: float) -> str | None:
    """stdout of one call of ``argv`` (``argv[0]`` looked up on PATH), or None when
    the tool is absent, exits non-zero, cannot start, or runs past ``timeout_s``. The tool
    runs in a session of its own that zl's interrupt handling kills (hooks call it from
    worker threads, where Ctrl-C never reaches subprocess.run), and a timeout kills it whole.

    The tool gets no stdin; its stderr is captured and dropped.
    """
    argv = [str(a) for a in argv]
    path = shutil.which(argv[0]) if argv else None
    if path is None or _hung_lately(path) is not None:
        return None
    try:
        proc = interrupts.run(argv, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        _hung[path] = (time.monotonic(), timeout_s)
        return None
    except (OSError, subprocess.SubprocessError):  # None: the next probe; check_tool says why
        return None
    return proc.stdout if proc.returncode == 0 else None


def _hung_lately(path: str) -> float | None:
    """The timeout the tool at ``path`` ran past within HUNG_MEMORY_S, else None."""
    seen = _hung.get(path)
    if seen is None or time.monotonic() - seen[0] > HUNG_MEMORY_S:
        return None
    return seen[1]


def check_tool(argv: Sequence[str], timeout_s: float) -> str:
    """"" when one call of ``argv`` answers (exit 0) within ``timeout_s``, else why not, in
    one line: absent, cannot start, its exit code with the first line it wrote, or no
    answer in time (the tool is killed then, so nothing of it stays behind). A tool that
    ran past its timeout lately in this process is not run again: that is the answer."""
    argv = [str(a) for a in argv]
    path = shutil.which(argv[0]) if argv else None
    if path is None:
        return f"{argv[0] if argv else 'the tool'} is not on PATH"
    if (waited := _hung_lately(path)) is not None:
        return f"{argv[0]} did not answer within {waited:g}s"
    try:
        proc = interrupts.run(argv, timeout=timeout_s, stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        _hung[path] = (time.monotonic(), timeout_s)
        return f"{argv[0]} did not answer within {timeout_s:g}s"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{argv[0]} cannot start: {exc}"
    if proc.returncode == 0:
        return ""
    said = next((line.strip() for line in (proc.stderr + "\n" + proc.stdout).splitlines()
                 if line.strip()), "")
    return f"{argv[0]} exited {proc.returncode}" + (f": {said[:200]}" if said else "")


def classify_by_markers(exc: BaseException, fatal: Sequence[str],
                        poisoned: Sequence[str] = ()) -> str | None:
    """An answer for ``zl_classify_capture_error`` from the runtime's own wording.

    ``"fatal"`` when a ``fatal`` marker occurs in ``"<ExcType>: <message>"``
    (lower-cased; markers are given in lower case), else ``"poisoned"`` for a
    ``poisoned`` marker, else None (zl then treats the error as recoverable).
    """
    text = f"{type(exc).__name__}: {exc}".lower()
    if any(marker in text for marker in fatal):
        return "fatal"
    if any(marker in text for marker in poisoned):
        return "poisoned"
    return None
