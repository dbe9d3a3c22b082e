"""pytest plugin for a device call: where a cell's teardown goes (issue 44).

A pipelined cell holds its device's timing gate until it exits, and on an H100 its
teardown (the first ``pytest_sessionfinish`` to the last ``pytest_unconfigure``) took
1.1-1.8 s a cell inside the gate (docs/validation/2026-12-08-ab-once.md). A cell of the
fake checkout on a CPU host (real pytest and zl plugins, no torch) took 0.045 s, 0.03 s
of it the gc.collect() pytest's unraisableexception plugin runs at unconfigure. Loaded into every cell through the environment
(``scripts/teardown_probe_call.sh``), it profiles that stretch with cProfile and writes,
per cell process, the stretch's seconds and its 30 most expensive calls by cumulative
time into ``$ZL_TEARDOWN_PROBE_DIR/<pid>.txt``, then, in a cold cell, how long the
interpreter took from there to its exit handlers.
"""

from __future__ import annotations

import atexit
import cProfile
import io
import os
import pstats
import time
from pathlib import Path

import pytest

_state: dict = {}


def _out() -> Path | None:
    folder = os.environ.get("ZL_TEARDOWN_PROBE_DIR")
    return Path(folder) / f"{os.getpid()}.txt" if folder else None


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if "profile" not in _state:
        _state["start"] = time.perf_counter()
        _state["profile"] = profile = cProfile.Profile()
        profile.enable()
    yield


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_unconfigure(config):
    yield
    profile = _state.pop("profile", None)
    out = _out()
    if profile is None or out is None:
        return
    profile.disable()
    ended = time.perf_counter()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(30)
    cell = os.environ.get("ZL_CELL_DIR", "?")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"cell {cell}\nteardown {ended - _state['start']:.3f} s\n{text.getvalue()}")
    # A cold cell's interpreter then finalizes (a warm one, forked, ends with os._exit).
    atexit.register(_to_exit, out, ended)


def _to_exit(out: Path, ended: float) -> None:
    with out.open("a", encoding="utf-8") as stream:
        stream.write(f"to exit handlers {time.perf_counter() - ended:.3f} s\n")
