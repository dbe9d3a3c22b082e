"""The ordered ``-p`` plugin list of a cell, planned from backend capabilities.

Order matters: phases first (its clock starts when it is imported, before the
others), then compat plugins (they rewrite collection-time markers); then vendor (sets ``GEMS_VENDOR`` before FlagGems is imported), seed, shapes,
autotune, compile_pool, ttgir, timing, foreign, and results last (it reads what the
others recorded).
"""

from __future__ import annotations

from typing import Any

import attrs

PACKAGE = "zl_flaggems.cell.plugins"
PHASES = f"{PACKAGE}.phases"
VENDOR = f"{PACKAGE}.vendor"
SEED = f"{PACKAGE}.seed"
SHAPES = f"{PACKAGE}.shapes"
AUTOTUNE = f"{PACKAGE}.autotune"
COMPILE_POOL = f"{PACKAGE}.compile_pool"
TTGIR = f"{PACKAGE}.ttgir"
TIMING = f"{PACKAGE}.timing"
FOREIGN = f"{PACKAGE}.foreign"
RESULTS = f"{PACKAGE}.results"

#: A check cell's own plugins: those that change no test (the backend's compat plugins go
#: between them: :func:`check_modules`). The phases plugin makes it watchable
#: like a benchmark cell: pytest -q's dots end no line, so a test that autotunes for
#: minutes is silent; its beats (each test, kernel compiled, autotune candidate) keep that
#: from reading as stalled, its armed stacks say where a stuck one is (without it the
#: stall's SIGUSR1 killed the check with no stacks), its record says where the time went.
#: The compile pool compiles a sweep's candidates side by side: a check's tests autotune
#: each new shape over the whole config space (FlagGems mm's seven checks spent 214 of
#: their 235 s compiling, one kernel after the other, on an H100).
CHECK_PLUGINS = (PHASES, COMPILE_POOL)

GRAPH_ON = ("graph", "cuda_graph", "1", "true", "yes", "on", "always")
GRAPH_OFF = ("direct", "0", "false", "no", "off", "never")


@attrs.frozen(kw_only=True)
class PluginPlan:
    modules: tuple[str, ...]
    timer: str  # resolved: "graph" | "direct" | "none"
    notes: tuple[str, ...] = ()


def resolve_timer(requested: str | None, backend: Any) -> tuple[str, str | None]:
    """``(timer, note)``: ``auto`` → graph when the backend can capture, else direct.

    Asking for graph on a backend without graph capture gives direct and a note;
    capture is a declared capability, never guessed from the backend's name.
    """
    value = (requested or "auto").strip().lower()
    can_capture = bool(getattr(backend, "graph_capture", False))
    name = getattr(backend, "name", "?")
    if value == "none":
        return "none", None
    if value in GRAPH_OFF:
        return "direct", None
    if value in GRAPH_ON:
        if can_capture:
            return "graph", None
        return "direct", f"timer=graph ignored on backend={name} (no graph capture); using timer=direct"
    if value != "auto":
        return ("graph" if can_capture else "direct"), f"unknown timer {requested!r}; treated as auto"
    return ("graph" if can_capture else "direct"), None


def _compat(backend: Any, host: Any, notes: list[str]) -> list[str]:
    """The backend's compat plugins, as the run's plugin host lists them ([] without one)."""
    if host is None or backend is None:
        return []
    try:
        return list(host.compat_plugins(backend))
    except Exception as exc:  # noqa: BLE001 - a broken vendor hook is reported, not fatal
        notes.append(f"compat plugins of backend={getattr(backend, 'name', '?')} unavailable: {exc}")
        return []


def check_modules(backend: Any, host: Any = None) -> PluginPlan:
    """The ``-p`` modules of an accuracy-test cell: :data:`CHECK_PLUGINS` with the backend's
    compat plugins after the phases plugin, as in a benchmark cell. A compat plugin lifts
    a stale skip guard wherever the suite's tests carry it, so a check is not skipped where
    its benchmark ran (FlagGems' tests/test_top_k_per_row_decode.py carries the same
    guard as its benchmark)."""
    notes: list[str] = []
    modules = [PHASES, *_compat(backend, host, notes), *CHECK_PLUGINS[1:]]
    return PluginPlan(modules=tuple(dict.fromkeys(modules)), timer="none", notes=tuple(notes))


def plan(backend: Any, *, host: Any = None, autotune_mode: str = "uncontrolled",
         timer: str = "auto", ttgir: bool = True) -> PluginPlan:
    """The ``-p`` modules for one cell of ``backend``, in load order."""
    notes: list[str] = []
    modules: list[str] = [PHASES, *_compat(backend, host, notes)]
    modules += [VENDOR, SEED, SHAPES]
    if (autotune_mode or "uncontrolled") in ("record", "replay"):
        modules.append(AUTOTUNE)
    modules.append(COMPILE_POOL)  # inert unless the cell has compile workers
    if ttgir and bool(getattr(backend, "triton_hooks", True)):
        modules.append(TTGIR)
    elif ttgir:
        notes.append(f"backend={getattr(backend, 'name', '?')} declares no Triton hooks; TTGIR is not dumped")
    resolved, note = resolve_timer(timer, backend)
    if note:
        notes.append(note)
    if resolved != "none":
        modules.append(TIMING)
    modules += [FOREIGN, RESULTS]
    unique: list[str] = []
    for m in modules:
        if m not in unique:
            unique.append(m)
    return PluginPlan(modules=tuple(unique), timer=resolved, notes=tuple(notes))


def plan_cell(request: Any, host: Any = None) -> PluginPlan:
    """The plan of one cell request, with the compat plugins ``host`` (the run's
    plugin host) lists for its backend; without a host, planned without them."""
    return plan(request.backend, host=host, autotune_mode=request.autotune_mode,
                timer=request.timer)


def pytest_args(modules: tuple[str, ...] | list[str]) -> list[str]:
    """``["-p", m1, "-p", m2, ...]``."""
    out: list[str] = []
    for m in modules:
        out += ["-p", m]
    return out
