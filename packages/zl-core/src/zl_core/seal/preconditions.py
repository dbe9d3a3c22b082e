"""What a frozen campaign checks before its first cell, each check named: the manifest
and matrix are the frozen ones, zl's own files are unchanged, every source is at its
frozen commit with its benchmark files unchanged, every target still exists, the cells'
interpreter imports Triton and the provider's library from the frozen paths, the compiler
is the frozen build and the cells would inherit the frozen compiler variables, and the
device is the one named and free."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from zl_core.cells import devicelock
from zl_core.foundation.errors import SealBrokenError, ZlError
from zl_core.interface.provider import OpInfo
from zl_core.plugins.host import PluginHost

from . import compiler, digests
from .freeze import (
    MANIFEST_NAME,
    MATRIX_NAME,
    from_manifest,
    read,
    source_state,
    switch_vars,
    tasks_as_written,
    workloads_of,
)
from .manifest import load_manifest
from .matrix import FrozenMatrix


def check(host: PluginHost, frozen_dir: Path, *, python: str | None = None) -> FrozenMatrix:
    """The frozen matrix, once every precondition holds; SealBrokenError naming each
    one that does not."""
    frozen_dir = Path(frozen_dir)
    matrix, seal = read(frozen_dir)
    problems: list[str] = []
    _bound(frozen_dir, matrix, seal, problems)
    _harness(matrix, problems)
    provider = host.providers().get(str(matrix.get("suite")))
    if provider is None:
        problems.append(f"suite: {matrix.get('suite')!r} is not installed")
    else:
        python = python or str(matrix.get("python") or sys.executable)
        _sources(provider, matrix, problems)
        _targets(provider, matrix, problems)
        imports = _imports(provider, matrix, python, problems)
        _compiler(host, provider, matrix, imports, python, problems)
    _device(host, matrix, problems)
    if problems:
        raise SealBrokenError(str(frozen_dir), problems)
    return matrix


def _bound(frozen_dir: Path, matrix: FrozenMatrix, seal: dict, problems: list[str]) -> None:
    manifest = digests.file_sha256(frozen_dir / MANIFEST_NAME)
    if manifest != seal.get("manifest_sha256") or manifest != matrix.get("manifest_sha256"):
        problems.append(f"manifest: {MANIFEST_NAME} differs from the one frozen (sha256 "
                        f"{str(manifest)[:12]}, frozen {str(matrix.get('manifest_sha256'))[:12]})")
    if digests.file_sha256(frozen_dir / MATRIX_NAME) != seal.get("matrix_sha256"):
        problems.append(f"matrix: {MATRIX_NAME} was edited after freezing")
    _as_written(frozen_dir, matrix, problems)


def _as_written(frozen_dir: Path, matrix: FrozenMatrix, problems: list[str]) -> None:
    """The matrix says what its manifest says: a matrix edited and its seal recomputed to
    match still disagrees with the manifest (whose own edit the seal would show)."""
    try:
        manifest = load_manifest(frozen_dir / MANIFEST_NAME)
    except ZlError as exc:
        problems.append(f"manifest: {MANIFEST_NAME} cannot be read ({exc})")
        return
    differ = [key for key, value in from_manifest(manifest).items() if matrix.get(key) != value]
    if workloads_of(manifest) != tasks_as_written(matrix):
        differ.append("tasks")
    if differ:
        problems.append(f"matrix: {MATRIX_NAME} says otherwise than {MANIFEST_NAME} for "
                        f"{', '.join(differ)}: it was edited after freezing; freeze the manifest again")


def _harness(matrix: FrozenMatrix, problems: list[str]) -> None:
    changed = digests.differences(matrix.zl_files, digests.zl_files())
    if changed:
        problems.append(f"zl: {len(changed)} of zl's own files differ from the frozen harness "
                        f"({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''})")


def _sources(provider, matrix: FrozenMatrix, problems: list[str]) -> None:
    for source in matrix.sources:
        name, path = source.get("name"), str(source.get("path"))
        if not Path(path).is_dir():
            problems.append(f"source {name}: {path} is gone")
            continue
        commit = source.get("commit")
        _commit, found = source_state(provider, path, None if commit is None else str(commit), "frozen at")
        problems.extend(f"source {name}: {p}" for p in found)


def _source_path(matrix: FrozenMatrix, name: object) -> str | None:
    return next((str(s["path"]) for s in matrix.sources if s.get("name") == name), None)


def _targets(provider, matrix: FrozenMatrix, problems: list[str]) -> None:
    inventories: dict[str | None, list[OpInfo]] = {}
    for task in matrix.tasks:
        source = _source_path(matrix, task.source)
        if source not in inventories:
            inventories[source] = provider.list_ops(source)
        found = [o for o in inventories[source] if o.op == task.op and o.op_file == task.op_file]
        if not found:
            problems.append(f"target {task.op}: no longer in {task.op_file} of the "
                            f"{provider.name} suite" + (f" at {source}" if source else ""))
            continue
        root = Path(source) if source else None
        paths = list(provider.workload_files(found[0], source))
        check = task.check
        if check is not None and root is not None:  # its accuracy tests, bound at freeze
            paths.append(root / check.file)
        now = {digests.shown_path(path, root): digests.file_sha256(path) for path in paths}
        changed = digests.differences(task.files, now)
        if changed:
            problems.append(f"benchmark {task.op}: {', '.join(changed[:3])}"
                            f"{', ...' if len(changed) > 3 else ''}")


def _imports(provider, matrix: FrozenMatrix, python: str, problems: list[str]) -> dict[str, str | None]:
    default = matrix.sources[0].get("path") if matrix.sources else None
    now = provider.frozen_imports(python=python, source=None if default is None else str(default))
    for module, frozen in matrix.imports.items():
        if now.get(module) != frozen:
            problems.append(f"import {module}: {python} imports it from {now.get(module) or 'nowhere'}, "
                            f"frozen from {frozen}")
    return now


def _compiler(host: PluginHost, provider, matrix: FrozenMatrix, imports: dict[str, str | None], python: str,
              problems: list[str]) -> None:
    try:
        backend = host.get_backend(str(matrix.get("backend")))
    except ZlError as exc:
        problems.append(f"compiler: the {matrix.get('backend')} backend, whose compiler was frozen, "
                        f"cannot be found ({exc})")
        return
    compiler.check(matrix, backend, provider, imports, python, switch_vars(matrix), os.environ, problems)


def _device(host: PluginHost, matrix: FrozenMatrix, problems: list[str]) -> None:
    if matrix.get("compile_only"):
        return
    device = str(matrix.get("device"))
    try:
        backend = host.get_backend(str(matrix.get("backend")))
        # The devices this machine shows (mask, vendor tool, torch), not merely the one named.
        present = host.enumerate_devices(backend)
    except ZlError as exc:
        problems.append(f"device: {matrix.get('backend')} device {device} cannot be looked for ({exc})")
        return
    if device not in present:
        problems.append(f"device: {backend.name} device {device} is not here (this machine shows "
                        f"{', '.join(present) or 'none'})")
        return
    name = host.device_identity(backend, device).get("device_name")
    if matrix.get("device_name") and name != matrix["device_name"]:
        problems.append(f"device: {backend.name} device {device} is {name or 'unnamed'}, frozen "
                        f"for {matrix['device_name']}")
    lock = devicelock.DeviceLock(backend.name, device)
    try:
        free = lock.try_acquire()
    except OSError as exc:
        problems.append(f"device: its lock cannot be taken ({exc.strerror})")
        return
    if not free:
        problems.append(f"device: {backend.name} device {device} is busy ({lock.holder()})")
    lock.release()
