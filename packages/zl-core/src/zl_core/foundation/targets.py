"""Compile-only targets (``--target``), as the backends declare them.

Each backend's :class:`~zl_core.foundation.backend.TargetGrammar` says how its targets are
written, their warp size and its default target; this module only looks a target
up among the backends it is given, so no target, architecture or vendor is named
above the backend packages.
"""

from __future__ import annotations

from collections.abc import Sequence

from zl_core.foundation.backend import Backend, CompileTarget, TargetGrammar
from zl_core.foundation.errors import UsageError


def _with_targets(backends: Sequence[Backend]) -> list[tuple[Backend, TargetGrammar]]:
    """Each backend that compiles without a device, with its grammar of targets."""
    return [(b, grammar) for b in backends if (grammar := b.compile_targets) is not None]


def expected(backends: Sequence[Backend]) -> str:
    """What a target may look like, for messages."""
    shown = [grammar.describe() for _, grammar in _with_targets(backends)]
    return " or ".join(shown) or "no installed backend compiles without a device"


def resolve(text: str, backends: Sequence[Backend]) -> tuple[Backend, CompileTarget]:
    """The backend whose grammar ``text`` follows, and the target it names.

    Raises :class:`UsageError` naming every grammar of ``backends`` otherwise.
    """
    for backend, grammar in _with_targets(backends):
        target = grammar.parse(text)
        if target is not None:
            return backend, target
    raise UsageError(f"bad target {text!r}: expected {expected(backends)}")


def default(backends: Sequence[Backend]) -> str:
    """The one default target ``backends`` declare (pass ``[backend]`` when the
    user named a backend); :class:`UsageError` when none or several do."""
    declared = [grammar.default for _, grammar in _with_targets(backends) if grammar.default]
    if len(declared) == 1:
        return declared[0]
    if not declared:
        names = ", ".join(b.name for b in backends) or "none installed"
        raise UsageError(f"no default compile-only target for backend(s) {names}; "
                         f"pass --target ({expected(backends)})")
    raise UsageError(f"several default compile-only targets ({', '.join(declared)}); "
                     "pick one with --target")
