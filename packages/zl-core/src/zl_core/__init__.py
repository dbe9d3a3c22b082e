"""zl: does a compiler switch change an operator's generated code, and its speed?

The public plugin surface: :data:`hookimpl`, :class:`Backend`, :class:`TelemetryReading`,
:func:`plugin_host`,
and :mod:`zl_core.foundation.vendor_tools` (running a vendor's tool, reading its runtime's errors).
"""

from zl_core.foundation.backend import Backend, TelemetryReading
from zl_core.foundation.markers import hookimpl
from zl_core.plugins.host import PluginHost, plugin_host

__version__ = "0.1.0"

__all__ = ["Backend", "PluginHost", "TelemetryReading", "__version__", "hookimpl", "plugin_host"]
