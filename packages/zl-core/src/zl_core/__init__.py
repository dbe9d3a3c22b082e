"""zl: does a compiler switch change an operator's generated code, and its speed?

The public plugin surface: :data:`hookimpl`, :class:`Backend`, :class:`TelemetryReading`,
:func:`plugin_host`,
and :mod:`zl_core.foundation.vendor_tools` (running a vendor's tool, reading its runtime's errors).

The names are imported when first used, not with the package: every cell process imports
some of zl_core's modules (the contract, its clock), and the plugin host behind these
names (pluggy, the entry points) would cost each of them a fifth of a second for nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zl_core.foundation.backend import Backend, TelemetryReading
    from zl_core.foundation.markers import hookimpl
    from zl_core.plugins.host import PluginHost, plugin_host

__version__ = "0.1.0"

__all__ = ["Backend", "PluginHost", "TelemetryReading", "__version__", "hookimpl", "plugin_host"]

_WHERE = {"Backend": "zl_core.foundation.backend", "TelemetryReading": "zl_core.foundation.backend",
          "hookimpl": "zl_core.foundation.markers", "PluginHost": "zl_core.plugins.host",
          "plugin_host": "zl_core.plugins.host"}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'zl_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
