"""SHA-256 digests of the files a sealed campaign is bound to: zl's own (the harness),
and each workload's benchmark files (what a provider says defines its measurement)."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path

# One way to hash files, the compiler build's and the seal's alike (both used as digests.*).
from zl_core.foundation.compiler_build import combined, file_sha256  # noqa: F401
from zl_core.foundation.markers import ENTRY_POINT_GROUP

#: zl's own packages, where installed, besides its plugins: the core and the report renderer.
CORE_PACKAGES = ("zl_core", "zl_report")
#: Files of a package that are part of what runs (code, schemas, shape files, ini).
SUFFIXES = (".py", ".json", ".yaml", ".yml", ".ini", ".txt")


def harness_packages() -> tuple[str, ...]:
    """The packages whose code a receipt names: the core, the renderer and the top-level
    package of every installed ``zl`` entry point (providers and backends, whoever ships
    them), read from the package metadata without importing any of them."""
    try:
        plugins = {ep.value.split(":")[0].split(".")[0] for ep in md.entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:  # noqa: BLE001 - unreadable metadata: the plugin host says which
        plugins = set()
    return (*CORE_PACKAGES, *sorted(plugins - set(CORE_PACKAGES)))


def zl_files(packages: Iterable[str] | None = None) -> dict[str, str | None]:
    """``{"zl_core/cells/cell.py": sha256, ...}`` over the harness's installed packages."""
    out: dict[str, str | None] = {}
    packages = harness_packages() if packages is None else packages
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for location in spec.submodule_search_locations:
            root = Path(location)
            for path in sorted(root.rglob("*")):
                if (path.is_file() and path.suffix in SUFFIXES
                        and "__pycache__" not in path.parts):
                    out[f"{name}/{path.relative_to(root).as_posix()}"] = file_sha256(path)
    return out


def differences(frozen: Mapping[str, str | None], now: Mapping[str, str | None]) -> list[str]:
    """Names whose digest differs, or that one side lacks: ``edited x``, ``new y``, ``gone z``."""
    out = [f"edited {n}" for n in sorted(frozen) if n in now and now[n] != frozen[n]]
    out += [f"new {n}" for n in sorted(set(now) - set(frozen))]
    out += [f"gone {n}" for n in sorted(set(frozen) - set(now))]
    return out


def shown_path(path: Path, root: Path | None) -> str:
    """``path`` relative to the source ``root`` where it lies in it (the same on every
    machine that checks out the source elsewhere), else as it is."""
    path = Path(path)
    if root is not None:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()
