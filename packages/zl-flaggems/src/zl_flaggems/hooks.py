"""Entry point of the ``zl`` group: registers this package's providers."""

from __future__ import annotations

from zl_core import hookimpl


@hookimpl
def zl_providers() -> list:
    from zl_flaggems.provider import FlagGemsProvider

    providers = [FlagGemsProvider()]
    # -- other providers of this package go here (the built-in suite) --------
    from zl_flaggems.builtin.provider import BuiltinSuiteProvider

    providers.append(BuiltinSuiteProvider())
    return providers
