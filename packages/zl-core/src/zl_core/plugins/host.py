"""The plugin host: the one object through which zl asks its plugins anything.

:class:`PluginHost` is put together from one part per concern: loading the entry
points and calling their hooks in isolation (:mod:`zl_core.plugins.calls`), the
backends and their devices (:mod:`zl_core.plugins.backends`) and the providers
(:mod:`zl_core.plugins.providers`).
"""

from __future__ import annotations

from zl_core.foundation.backend import TELEMETRY_COLUMNS
from zl_core.plugins.backends import BackendQueries
from zl_core.plugins.calls import PROBLEM_LISTENERS
from zl_core.plugins.providers import ProviderQueries, adapt_provider

__all__ = ["PROBLEM_LISTENERS", "TELEMETRY_COLUMNS", "PluginHost", "adapt_provider", "plugin_host"]


class PluginHost(BackendQueries, ProviderQueries):
    """Typed facade over the ``zl`` plugin manager."""

    def health(self) -> list[str]:
        """Ask every hook of every backend once, with harmless arguments, so that a
        plugin whose hooks raise shows as broken (``zl backends``); the problems."""
        probe = RuntimeError("zl health check")
        for backend in self.backends():
            self.probe_devices(backend)
            self.telemetry_command(backend, None)
            self.sample_telemetry(backend, None)
            self.parse_telemetry(backend, "")
            self.classify_capture_error(backend, probe)
            self.compat_plugins(backend)
        self.providers()
        return self.problems


_HOST: PluginHost | None = None


def plugin_host(refresh: bool = False) -> PluginHost:
    """The process-wide host with every installed plugin loaded."""
    global _HOST
    if _HOST is None or refresh:
        _HOST = PluginHost.load()
    return _HOST
