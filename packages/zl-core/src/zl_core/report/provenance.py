"""Where a report's numbers come from, read from its cells' identities
(``run_identity.json``): the zl that ran them, the compiler build, the provider's
commit, the driver, the hosts and devices, and when the first cell started and the
last one finished (``summary.provenance``)."""

from __future__ import annotations

from collections.abc import Mapping

#: The zl package whose version a report names.
ZL_PACKAGE = "zl-core"


def provenance(identities: Mapping[str, Mapping | None]) -> dict:
    """Each field's distinct values over the cells (sorted; empty where no cell recorded
    it), and the first start and last finish (UTC stamps as the cells wrote them)."""
    found: dict[str, set[str]] = {k: set() for k in (
        "zl_versions", "compiler_builds", "compilers", "provider_commits", "drivers", "hosts",
        "devices")}
    started: list[str] = []
    finished: list[str] = []
    cells = 0
    for ident in identities.values():
        if not isinstance(ident, Mapping):
            continue
        cells += 1
        versions = ident.get("zl_versions")
        if isinstance(versions, Mapping) and versions.get(ZL_PACKAGE):
            found["zl_versions"].add(str(versions[ZL_PACKAGE]))
        _add(found["compiler_builds"], ident.get("compiler_build"))
        compiler = ident.get("compiler")
        if isinstance(compiler, Mapping):
            for module, build in compiler.items():
                if isinstance(build, Mapping):
                    words = [str(module), str(build.get("version") or ""),
                             f"commit {str(build['commit'])[:12]}" if build.get("commit") else ""]
                    found["compilers"].add(" ".join(w for w in words if w))
        if ident.get("provider_commit"):
            provider = ident.get("provider") or "provider"
            found["provider_commits"].add(f"{provider} {str(ident['provider_commit'])[:12]}")
        _add(found["drivers"], ident.get("driver_version"))
        _add(found["hosts"], ident.get("host"))
        _add(found["devices"], ident.get("device_name"))
        for into, key in ((started, "started"), (finished, "finished")):
            if isinstance(ident.get(key), str) and ident[key]:
                into.append(ident[key])
    out: dict = {k: sorted(v) for k, v in found.items()}
    out.update(cells=cells, first_started=min(started, default=None),
               last_finished=max(finished, default=None))
    return out


def _add(into: set[str], value: object) -> None:
    if value not in (None, ""):
        into.add(str(value))
