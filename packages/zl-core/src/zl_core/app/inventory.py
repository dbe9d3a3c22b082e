"""What is installed and offered: the backends and plugins (``zl backends``) and a
suite's operators (``zl ops``), as records the command line prints."""

from __future__ import annotations

from typing import Any

import attrs

from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import OpInfo
from zl_core.plugins.host import PluginHost

from .options import Where
from .resolve import every_op, resolve_sources, resolve_suite


def backends_listing(host: PluginHost) -> dict[str, Any]:
    """Every backend and plugin as plain data (``zl backends --json``); every hook of every
    backend is asked once first, so a plugin whose hooks raise shows as broken."""
    host.health()
    backends = []
    for backend in host.backends():
        origin = host.backend_origin(backend)
        backends.append({
            "name": backend.name,
            "aliases": list(backend.aliases),
            "package": origin.package,
            "version": origin.version,
            "description": backend.description,
            "capabilities": backend.capabilities,
        })
    plugins = [{"name": r.name, "package": r.package, "version": r.version,
                "status": r.status, "reason": r.reason} for r in host.plugins]
    return {"backends": backends, "plugins": plugins, "problems": host.problems}


@attrs.frozen(kw_only=True)
class SourceOps:
    """One checkout's operators: ``name`` is "" for the default (unprefixed) source,
    ``path`` None for a suite packaged with its provider; ``ops`` pairs each operator
    as ``--ops`` names it with what the provider says of it; ``dtype_choices`` are the
    dtypes a filter may name there (() where the suite does not restrict them)."""

    name: str
    path: str | None
    ops: tuple[tuple[OpSpec, OpInfo], ...]
    dtype_choices: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class OpsListing:
    suite: str
    sources: tuple[SourceOps, ...]


def suite_ops(host: PluginHost, where: Where) -> OpsListing:
    """The operators the suite ``where`` picks offers, checkout by checkout (a missing or
    foreign checkout: exit 3, not "0 operators")."""
    provider, source = resolve_suite(host, where.suite, where.source)
    sources = resolve_sources(provider, where)
    for _, checkout in sources.entries:
        provider.check_source(checkout)
    listed = []
    for name, path in (sources.entries or (("", source),)):
        specs = every_op(provider, path, "" if sources.is_default(name) else name)
        listed.append(SourceOps(name=name, path=path,
                                ops=tuple(zip(specs, provider.list_ops(path), strict=True)),
                                dtype_choices=tuple(provider.dtype_choices(path))))
    return OpsListing(suite=provider.name, sources=tuple(listed))
