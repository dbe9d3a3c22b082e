"""The cell contract as the in-process plugins read it (``ZL_*`` variables).

Small helpers shared by the plugins: the cell directory, the backend of the
cell, integer settings, one-line notes, identity merges and atomic writes.
Nothing here imports torch or triton.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zl_core.foundation.atomic import write_json_atomic
from zl_core.interface import contract

_UNRESOLVED = object()
_backend_cache: Any = _UNRESOLVED

_config: Any = None


def bind_config(config: Any) -> None:
    """Remember pytest's config; its terminal reporter is looked up when printing
    (it registers after our plugins' ``pytest_configure``)."""
    global _config
    _config = config


def line_start() -> None:
    """End pytest's pending progress line (``benchmark/test_x.py ``) before we print:
    markers are counted only at the start of a line."""
    try:
        terminal = _config.pluginmanager.get_plugin("terminalreporter") if _config is not None else None
    except Exception:  # noqa: BLE001 - cosmetic: without the reporter the line is printed as is
        terminal = None
    ensure = getattr(terminal, "ensure_newline", None)
    if callable(ensure):
        try:
            ensure()
        except Exception:  # noqa: BLE001 - cosmetic, as above
            pass


def note(plugin: str, message: str) -> None:
    """One plain line on stdout, tagged with the plugin (lands in run.log)."""
    line_start()
    print(f"[zl {plugin}] {message}", flush=True)


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def cell_dir() -> Path | None:
    """``ZL_CELL_DIR``, or None outside a zl cell (then plugins write nothing)."""
    value = env(contract.CELL_DIR)
    return Path(value) if value else None


def env_int(name: str, default: int, minimum: int = 1) -> int:
    """An integer setting; garbage or values below ``minimum`` give ``default``."""
    raw = env(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        note("env", f"{name}={raw!r} is not an integer; using {default}")
        return default
    if value < minimum:
        note("env", f"{name}={value} is below {minimum}; using {default}")
        return default
    return value


def env_float(name: str, default: float) -> float:
    """A positive finite number setting; garbage gives ``default`` (and a note)."""
    raw = env(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (0 < value < float("inf")):
        note("env", f"{name}={raw!r} is not a positive number; using {default:g}")
        return default
    return value


def backend(plugin: str = "env") -> Any:
    """The cell's :class:`zl_core.Backend` from ``ZL_BACKEND``, or None (with a note).

    Resolved once per process: every plugin sees the same answer.
    """
    global _backend_cache
    if _backend_cache is not _UNRESOLVED:
        return _backend_cache
    name = env(contract.BACKEND)
    found = None
    if not name:
        note(plugin, "ZL_BACKEND is not set; backend-specific behaviour is off")
    else:
        try:
            from zl_core import plugin_host

            found = plugin_host().get_backend(name)
        except Exception as exc:  # noqa: BLE001 - a bad name must not crash the benchmark
            note(plugin, f"cannot resolve backend {name!r}: {one_line(exc)}")
    _backend_cache = found
    return found


def one_line(value: object, limit: int = 300) -> str:
    """Text as one line, whitespace collapsed and bounded. For an exception: its type and
    the first line of its message (torch appends pages of boilerplate after it)."""
    if isinstance(value, BaseException):
        lines = [ln for ln in str(value).splitlines() if ln.strip()]
        text = f"{type(value).__name__}: {lines[0]}" if lines else type(value).__name__
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def merge_identity(plugin: str, updates: Mapping[str, object], *, fill: bool = False) -> None:
    """Merge into ``<cell>/run_identity.json``; never fails the run. With ``fill``,
    only fields the identity does not hold yet (:func:`zl_core.interface.caliber.fill_identity`)."""
    cell = cell_dir()
    if cell is None:
        return
    try:
        from zl_core.interface import caliber

        (caliber.fill_identity if fill else caliber.merge_identity)(cell, dict(updates))
    except Exception as exc:  # noqa: BLE001 - identity problems are reported, never fatal
        note(plugin, f"could not update run_identity.json: {one_line(exc)}")


def write_json(path: Path, data: object) -> None:
    write_json_atomic(path, data, allow_nan=False)


def op_of_item(item: Any) -> str:
    """The deny-list key of a pytest item: its function name minus ``test_``."""
    name = getattr(item, "originalname", None) or getattr(item, "name", "") or ""
    name = name.split("[", 1)[0]
    return name.removeprefix("test_")


def stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
