"""Entry point of the ``zl`` group: registers this package's providers.

A cell's plugin host loads it too (to find its backend), so the providers are
imported only when asked for, never at import."""

from __future__ import annotations

from zl_core import hookimpl


@hookimpl
def zl_providers() -> list:
    from zl_flaggems.host.provider import FlagGemsProvider

    providers = [FlagGemsProvider()]
    # -- other providers of this package go here (the built-in suite) --------
    from zl_flaggems.host.builtin_provider import BuiltinSuiteProvider

    providers.append(BuiltinSuiteProvider())
    return providers
