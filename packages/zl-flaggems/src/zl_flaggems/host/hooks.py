"""Entry point of the ``zl`` group: registers this package's providers.

A cell's plugin host loads it too (to find its backend), so the providers are
imported only when asked for, never at import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zl_core import hookimpl

if TYPE_CHECKING:
    from zl_core.interface.provider import Provider


@hookimpl
def zl_providers() -> list[Provider]:
    from zl_flaggems.host.provider import FlagGemsProvider

    providers: list[Provider] = [FlagGemsProvider()]
    # -- other providers of this package go here (the built-in suite) --------
    from zl_flaggems.host.builtin_provider import BuiltinSuiteProvider

    providers.append(BuiltinSuiteProvider())
    return providers
