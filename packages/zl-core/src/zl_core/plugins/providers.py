"""What the host asks provider plugins: the suites they offer, each adapted to the
current provider API."""

from __future__ import annotations

import inspect
from typing import Any

from zl_core.foundation.errors import UnknownProviderError
from zl_core.interface.provider import Provider
from zl_core.plugins.calls import PluginCalls


class ProviderQueries(PluginCalls):
    """The providers (suites) the plugins declare."""

    def providers(self) -> dict[str, Provider]:
        found: dict[str, Provider] = {}
        for _plugin, provider in self._items("zl_providers", Provider):
            found[provider.name] = adapt_provider(provider)
        return found

    def get_provider(self, name: str) -> Provider:
        providers = self.providers()
        if name in providers:
            return providers[name]
        known = ", ".join(sorted(providers)) or "none are installed (pip install zl-flaggems)"
        raise UnknownProviderError(f"unknown suite {name!r}; known suites: {known}")


#: Provider methods that gained a ``host`` argument (provider API 2): one written to API 1,
#: ``preflight(self, request)``, keeps working, called without it.
HOST_ARGUMENT = ("preflight", "cell_command")


def _takes_host(method: Any) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (len(positional) >= 2 or any(p.name == "host" for p in params)
            or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params))


def adapt_provider(provider: Provider) -> Provider:
    """``provider``, its API-1 methods (no ``host``) wrapped to take and drop it."""
    for name in HOST_ARGUMENT:
        method = getattr(provider, name)
        if not _takes_host(method):
            setattr(provider, name, lambda request, host=None, _method=method: _method(request))
    return provider


