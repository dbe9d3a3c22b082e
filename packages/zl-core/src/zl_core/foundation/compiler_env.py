"""The compiler's environment: which variables decide what a cell's compiler generates,
and what a cell does with those it inherits from the shell that started zl.

A provider (for the compiler and the library its cells run) and a backend (for its
vendor's) declare them as a :class:`CompilerEnv`: the variables they read, as ``fnmatch``
patterns, and their *switch families*, groups of variables that act on one compiler
feature together (FlagTree's RLC switches and their phase masks). A cell then

* never inherits a variable its campaign's sides set (the switch being measured), nor any
  member of a family such a variable belongs to: those are *scrubbed* from what it
  inherits, so the switch comes from the side alone (:func:`scrub`);
* records every variable the compiler or provider reads as it got it, and which of them
  it inherited (:class:`CellVars`); the inherited ones are the caliber field
  ``compiler_env``, compared like any other (docs/caliber.md).

Nothing here knows a compiler: the patterns come from the plugins.
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

#: The caliber value of a cell that inherited none of the variables its compiler reads.
NONE = "none"


def _patterns(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(dict.fromkeys(str(v) for v in value))


def _families(value: Any) -> tuple[tuple[str, ...], ...]:
    return tuple(dict.fromkeys(_patterns(family) for family in value))


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@attrs.frozen(kw_only=True)
class CompilerEnv:
    """The variables that decide a compiler's output, as ``fnmatch`` patterns.

    ``reads``: what the compiler and the provider's library read (a cell records them,
    and compares the inherited ones); ``ignores``: names matching ``reads`` that decide
    no code (a checkout's path, say); ``families``: groups that act together, so that a
    switch of one scrubs every member from what the cells inherit.
    """

    reads: tuple[str, ...] = attrs.field(default=(), converter=_patterns)
    ignores: tuple[str, ...] = attrs.field(default=(), converter=_patterns)
    families: tuple[tuple[str, ...], ...] = attrs.field(default=(), converter=_families)

    def __or__(self, other: CompilerEnv) -> CompilerEnv:
        return CompilerEnv(reads=(*self.reads, *other.reads), ignores=(*self.ignores, *other.ignores),
                           families=(*self.families, *other.families))

    def read(self, name: str) -> bool:
        """Whether the compiler or the provider reads ``name``."""
        return _matches(name, self.reads) and not _matches(name, self.ignores)

    def family_of(self, names: Iterable[str]) -> tuple[str, ...]:
        """The patterns of every family one of ``names`` belongs to, and the names themselves."""
        names = tuple(names)
        found = [p for family in self.families if any(_matches(n, family) for n in names)
                 for p in family]
        return tuple(dict.fromkeys((*names, *found)))

    def to_json(self) -> dict:
        return {"reads": list(self.reads), "ignores": list(self.ignores),
                "families": [list(f) for f in self.families]}


def scrub(environ: Mapping[str, str], switch_vars: Iterable[str],
          spec: CompilerEnv) -> tuple[dict[str, str], dict[str, str]]:
    """``(kept, scrubbed)``: ``environ`` less every variable of the switch's families
    (``switch_vars``, the variables a campaign's sides set, and their families' members),
    and those it held, by name."""
    family = spec.family_of(switch_vars)
    kept: dict[str, str] = {}
    scrubbed: dict[str, str] = {}
    for name, value in environ.items():
        (scrubbed if _matches(name, family) else kept)[name] = value
    return kept, dict(sorted(scrubbed.items()))


@attrs.frozen(kw_only=True)
class CellVars:
    """The compiler's variables as one cell got them (its identity's ``compiler_vars``)."""

    #: Every variable the compiler or provider reads, with the value the cell got.
    effective: dict[str, str]
    #: Of those, the ones the cell inherited from zl's own environment (the caliber).
    inherited: dict[str, str]
    #: What the caller's environment held of the switch's families, not passed on.
    scrubbed: dict[str, str]

    @classmethod
    def of(cls, env: Mapping[str, str], *, inherited_from: Mapping[str, str],
           written: Iterable[str], scrubbed: Mapping[str, str], spec: CompilerEnv) -> CellVars:
        """``env``, the cell's whole environment, built from ``inherited_from`` (the
        caller's, scrubbed) with ``written`` set over it by zl, the side and the provider."""
        written = set(written)
        effective = {k: v for k, v in sorted(env.items()) if spec.read(k)}
        inherited = {k: v for k, v in effective.items()
                     if k not in written and inherited_from.get(k) == v}
        return cls(effective=effective, inherited=inherited, scrubbed=dict(scrubbed))

    @property
    def caliber(self) -> str:
        """The caliber field ``compiler_env``: ``NAME=value ...``, sorted, or ``none``."""
        return caliber_value(self.inherited)

    def to_json(self) -> dict:
        return {"effective": self.effective, "inherited": self.inherited, "scrubbed": self.scrubbed}


def caliber_value(inherited: Mapping[str, str]) -> str:
    """``NAME=value ...`` (sorted, values quoted as a shell would need), or ``none``."""
    if not inherited:
        return NONE
    return " ".join(f"{name}={shlex.quote(value)}" for name, value in sorted(inherited.items()))


def inherited_now(environ: Mapping[str, str], switch_vars: Iterable[str], spec: CompilerEnv,
                  owned: Iterable[str] = ()) -> dict[str, str]:
    """What a cell started now would inherit of the variables ``spec`` reads: ``environ``
    scrubbed of the switch's families, less ``owned`` (the variables zl sets in every
    cell itself). Frozen campaigns bind it (:mod:`zl_core.seal.freeze`)."""
    kept, _ = scrub(environ, switch_vars, spec)
    owned = set(owned)
    return {k: v for k, v in sorted(kept.items()) if spec.read(k) and k not in owned}
