"""pytest plugin: pick FlagGems' vendor from the backend, record what the cell ran on.

* Before any conftest is imported (FlagGems' benchmark conftest imports
  ``flag_gems``), make sure ``GEMS_VENDOR`` is set from the backend unless the
  user set one of FlagGems' vendor variables: FlagGems' own detection can
  shell out to vendor tools with no timeout.
* Once the benchmark modules are collected (so ``flag_gems`` is imported),
  merge device name, torch / triton / flag_gems versions and FlagGems' vendor
  into ``run_identity.json``. Identity problems print one note, never fail.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import pytest

from zl_flaggems.cell import cellenv
from zl_flaggems.common import gems_env

PLUGIN = "vendor"
_done = False


def ensure_gems_vendor(backend: Any) -> str | None:
    """Apply :func:`zl_flaggems.common.gems_env.vendor_env` to this process (a zl cell has it
    from its provider already; a cell started by hand may not); returns the vendor."""
    os.environ.update(gems_env.vendor_env(backend, os.environ))
    return gems_env.user_vendor(os.environ)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: Any, parser: Any, args: Any) -> None:
    ensure_gems_vendor(cellenv.backend(PLUGIN))


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)
    ensure_gems_vendor(cellenv.backend(PLUGIN))  # when loaded other than by -p


def _version(module: Any) -> str | None:
    value = getattr(module, "__version__", None)
    return str(value) if value is not None else None


def _loaded(name: str, problems: list[str]) -> Any:
    """Module ``name``, imported unless it already is; None (and a note) if it fails."""
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{name}: {cellenv.one_line(exc)}")
    return module


def collect_identity(backend: Any) -> tuple[dict[str, Any], list[str]]:
    """What the process runs on, plus notes about what could not be read."""
    identity: dict[str, Any] = {}
    problems: list[str] = []
    torch = _loaded("torch", problems)
    if torch is not None:
        identity["torch_version"] = _version(torch)
        namespace_name = getattr(backend, "torch_namespace", "") if backend is not None else ""
        if namespace_name:
            try:
                extension = getattr(backend, "torch_extension", "")
                if extension:
                    importlib.import_module(extension)
                namespace = getattr(torch, namespace_name)
                identity["device_name"] = str(namespace.get_device_name(0))
            except Exception as exc:  # noqa: BLE001
                problems.append(f"device name via torch.{namespace_name}: {cellenv.one_line(exc)}")
    triton = _loaded("triton", problems)
    if triton is not None:
        identity["triton_version"] = _version(triton)
    gems = gems_env.imported_package()  # never imported here: the benchmark decides
    if gems is not None:
        identity["flag_gems_version"] = _version(gems)
        identity["gems_package_imported"] = gems.__name__
        identity["flaggems_vendor"] = getattr(gems, "vendor_name", None)
        expected = getattr(backend, "vendor", "") if backend is not None else ""
        got = identity["flaggems_vendor"]
        if expected and got and got != expected:
            problems.append(f"{gems.__name__} picked vendor {got!r} but backend "
                            f"{getattr(backend, 'name', '?')} expects {expected!r} "
                            f"({gems_env.VENDOR}={os.environ.get(gems_env.VENDOR, '')!r})")
    return identity, problems


def record_identity() -> None:
    global _done
    if _done:
        return
    _done = True
    backend = cellenv.backend(PLUGIN)
    try:
        identity, problems = collect_identity(backend)
    except Exception as exc:  # noqa: BLE001 - identity must never fail the run
        identity, problems = {}, [cellenv.one_line(exc)]
    for problem in problems:
        cellenv.note(PLUGIN, problem)
    if identity:
        # Versions only the cell can know; the device name when no vendor tool gave one.
        cellenv.merge_identity(PLUGIN, identity, fill=True)


def pytest_collection_finish(session: Any) -> None:
    record_identity()


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    record_identity()  # collection may have failed before collection_finish
