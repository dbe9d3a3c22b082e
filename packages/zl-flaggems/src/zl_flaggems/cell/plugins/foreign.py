"""pytest plugin: report benchmarks that imported another vendor's FlagGems code.

At session end, every loaded module under ``flag_gems.runtime.backend._<vendor>``
whose vendor segment is not the active vendor is reported once per vendor:
``FOREIGN_VENDOR_MODULE active=<v> loaded=<a,b>``. The vendor is compared as a
whole dotted segment (``_nvidia_ext`` is not ``_nvidia``). A report, never a
refusal: some shared helpers live in another vendor's folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

import pytest

from zl_flaggems.cell import cellenv, markers
from zl_flaggems.common import gems_env

PLUGIN = "foreign"
PREFIX = ("runtime", "backend")  # under either FlagGems package (gems_env.GEMS_PACKAGES)


def vendor_of(module_name: str) -> str | None:
    """``flag_gems.runtime.backend._nvidia.hopper.mm`` → ``nvidia`` (``flaggems_vllm.`` too);
    None for other modules."""
    parts = module_name.split(".")
    if len(parts) < 4 or parts[0] not in gems_env.GEMS_PACKAGES or tuple(parts[1:3]) != PREFIX:
        return None
    segment = parts[3]
    if not segment.startswith("_") or segment.startswith("__") or len(segment) < 2:
        return None
    return segment[1:]


def foreign_vendors(module_names: Iterable[str], active: str) -> list[str]:
    """Sorted vendors (other than ``active``) with at least one loaded module."""
    found = {v for v in (vendor_of(n) for n in module_names) if v is not None and v != active}
    return sorted(found)


def active_vendor() -> str:
    return gems_env.running_vendor(os.environ, lambda: cellenv.backend(PLUGIN))


def check() -> str | None:
    """Print the marker when foreign modules are loaded; returns the line or None."""
    active = active_vendor()
    if not active:
        return None
    foreign = foreign_vendors(list(sys.modules), active)
    if not foreign:
        return None
    line = markers.emit(markers.FOREIGN_VENDOR_MODULE, ("active", active), ("loaded", ",".join(foreign)))
    cellenv.note(PLUGIN, "the benchmark imported another vendor's implementation; check whether it "
                 "gates on an import succeeding rather than on flag_gems.vendor_name")
    return line


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)


@pytest.hookimpl(tryfirst=True)  # before the results plugin counts markers
def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    check()
