"""Compile-only targets and failures, for both ends of a compile-only cell.

The orchestrator checks a request's target (preflight, the switch probe) and picks
the default one when building the command; the cell (:mod:`zl_flaggems.cell.compile_only`)
parses the same target and exits with these codes. Kept apart from the cell's module,
which starts the cell's clock and arms its stack dump when imported.
"""

from __future__ import annotations

from collections.abc import Sequence

from zl_core.foundation import targets
from zl_core.foundation.backend import Backend

EXIT_COMPILE = 1
EXIT_USAGE = 2
EXIT_MISSING = 3


class CompileOnlyError(Exception):
    """A one-line failure with its exit code."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def _installed() -> list:
    from zl_core import plugin_host

    return plugin_host().backends()


def parse_target(text: str, backends: Sequence[Backend] | None = None) -> tuple[str, object, int]:
    """``(kind, arch, warp size)`` of a target, by the grammar of the backend it
    belongs to (``backends``, default: the installed ones)."""
    from zl_core.foundation.errors import UsageError

    try:
        return targets.resolve(text, _installed() if backends is None else backends)[1].triple
    except UsageError as exc:
        raise CompileOnlyError(str(exc), EXIT_USAGE) from None


def default_target(backends: Sequence[Backend] | None = None) -> str:
    """The target a cell compiles for when none is given."""
    from zl_core.foundation.errors import UsageError

    try:
        return targets.default(_installed() if backends is None else backends)
    except UsageError as exc:
        raise CompileOnlyError(str(exc), EXIT_USAGE) from None
