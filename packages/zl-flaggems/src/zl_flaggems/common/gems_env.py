"""FlagGems' own environment: the vendor it runs as and where its tuner cache lives.

One rule each (and the modules a warm cell shares). The providers apply them when they build a cell's command (the
cell's environment and the identity's ``tuner_cache``); the vendor plugin applies
the same vendor rule inside a cell started by hand. Nothing here imports torch,
triton or flag_gems.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from zl_core.interface import contract
from zl_core.interface.provider import WarmPlan

#: The variables FlagGems reads to pick its vendor, in its own order.
VENDOR_ENV_KEYS = ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "GEMS_BACKEND", "FLAGGEMS_BACKEND")
VENDOR = VENDOR_ENV_KEYS[0]
CACHE_DIR = "FLAGGEMS_CACHE_DIR"
DB_URL = "FLAGGEMS_DB_URL"
DEFAULT_CACHE = "~/.flaggems"
#: The package the cell's checkout holds (flag_gems, or flaggems_vllm for FlagGems-vllm),
#: written by the provider so the plugins look at the package the benchmark imports.
GEMS_PACKAGE_ENV = contract.SOURCE_PACKAGE
GEMS_PACKAGES = ("flag_gems", "flaggems_vllm")


def imported_package(environ: Mapping[str, str] | None = None) -> Any:
    """The FlagGems package module this process imported: the cell's own first (its
    checkout's, named by the provider), else whichever known one is loaded; None when
    the benchmark has imported none yet. Never imports anything."""
    environ = environ if environ is not None else os.environ
    wanted = environ.get(GEMS_PACKAGE_ENV, "")
    for name in ((wanted,) if wanted else ()) + GEMS_PACKAGES:
        module = sys.modules.get(name)
        if module is not None:
            return module
    return None


def user_vendor(environ: Mapping[str, str]) -> str | None:
    """The vendor the user chose through one of FlagGems' variables, else None."""
    for key in VENDOR_ENV_KEYS:
        value = (environ.get(key) or "").strip()
        if value:
            return value
    return None


def vendor_env(backend: Any, environ: Mapping[str, str]) -> dict[str, str]:
    """``GEMS_VENDOR`` from the backend, unless the user picked a vendor already.

    Setting it spares FlagGems its own detection, which can shell out to vendor
    tools with no timeout.
    """
    vendor = getattr(backend, "vendor", "") if backend is not None else ""
    if user_vendor(environ) or not vendor:
        return {}
    return {VENDOR: vendor}


def vendor(backend: Any, environ: Mapping[str, str]) -> str:
    """The vendor FlagGems will run as under ``environ`` ("" when unknown)."""
    return (user_vendor(environ) or vendor_env(backend, environ).get(VENDOR, "")).lower()


def tuner_cache(isolate: bool, cell_dir: Path,
                environ: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...], str]:
    """``(env, unset, identity)`` of the tuner cache of one cell.

    Isolated: FlagGems' cache goes to the cell's scratch folder (the core removes
    it after the run) and a database URL, which would bypass that folder, is
    dropped. Shared: the user's own cache, named in the identity.
    """
    if isolate:
        folder = Path(cell_dir).resolve() / contract.TUNER_CACHE
        return {CACHE_DIR: str(folder)}, (DB_URL,), "isolated"
    where = environ.get(DB_URL, environ.get(CACHE_DIR, DEFAULT_CACHE))
    return {}, (), f"shared({where})"


def running_vendor(environ: Mapping[str, str], backend: Callable[[], Any] = lambda: None) -> str:
    """The vendor FlagGems runs as in this process: its own answer once it is
    imported, else what :func:`vendor` says it will pick (``backend`` is only
    resolved then)."""
    gems = imported_package(environ)
    name = getattr(gems, "vendor_name", None) if gems is not None else None
    return str(name) if name else vendor(backend(), environ)


#: What a FlagGems cell imports once before it forks (``--start warm``): the heavy
#: modules flag_gems imports, but not flag_gems itself, whose import starts CUDA (it asks
#: torch for the device's properties) and reads FLAGGEMS_CACHE_DIR, a per-cell folder
#: (docs/validation/2026-12-04-h200-throughput.md). After triton, the module that computes
#: Triton's per-process cache key, so each forked cell inherits it (zl_flaggems.cell.triton_prime).
WARM_MODULES = ("torch", "triton", "zl_flaggems.cell.triton_prime", "numpy", "yaml", "sqlalchemy",
                "sqlalchemy.orm", "pytest")


def warm_plan() -> WarmPlan:
    return WarmPlan(modules=WARM_MODULES, per_cell=(CACHE_DIR,))

