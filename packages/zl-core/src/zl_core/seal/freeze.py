"""``zl freeze``: a manifest checked against the provider's inventory and the real tree,
then frozen into an immutable task matrix bound to it by SHA-256.

A frozen folder holds ``manifest.yaml`` (the manifest, byte for byte), ``matrix.json``
(what will run: the resolved workloads with the digests of their benchmark files, the
source commits, zl's own files, where the cells import Triton and the provider's library
from, the compiler build and the compiler variables the cells would inherit) and
``seal.json`` (the digests of the other two). :mod:`.preconditions` checks a frozen folder
against the machine before anything runs.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from zl_core import __version__
from zl_core.foundation import atomic
from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import BadInputError, ZlError
from zl_core.foundation.stamps import utc_stamp
from zl_core.interface.opspec import dtype_problem
from zl_core.interface.provider import CheckSpec, OpInfo, Provider
from zl_core.plugins.host import PluginHost

from . import compiler, digests
from .manifest import Manifest, ManifestError, SourceEntry, Workload, load_manifest
from .matrix import FrozenMatrix

MANIFEST_NAME, MATRIX_NAME, SEAL_NAME = "manifest.yaml", "matrix.json", "seal.json"
SCHEMA = 1
#: Accuracy-test collections run at once at freeze time (at most half the host's cores).
COLLECTIONS_AT_ONCE = 4


@attrs.frozen(kw_only=True)
class Frozen:
    """A matrix ready to write (or written): the manifest it came from and what runs."""

    manifest: Manifest
    manifest_path: Path
    matrix: FrozenMatrix


def plan(host: PluginHost, manifest_path: Path, *, python: str = sys.executable) -> Frozen:
    """Check the manifest against the provider and the tree and build the matrix; raises
    ManifestError naming every problem found."""
    manifest_path = Path(manifest_path)
    manifest = load_manifest(manifest_path)
    problems: list[str] = []
    provider = _provider(host, manifest.suite, problems)
    backend = _backend(host, manifest.backend, problems)
    sources = _sources(provider, manifest.sources, problems) if provider else []
    tasks = _tasks(provider, manifest, problems) if provider else []
    imports = provider.frozen_imports(python=python, source=_default_path(manifest)) if provider else {}
    for module, origin in imports.items():
        if origin is None:
            problems.append(f"import {module}: {python} cannot import it; freeze with the "
                            "interpreter the cells run (--python)")
    bound_compiler, bound_env = (compiler.frozen(backend, provider, imports, python, switch_vars(manifest),
                                                 os.environ, problems)
                                 if provider and backend else ({}, {}))
    if provider is not None and not problems:  # only a tree that checks out can say what its tests collect
        _collect_checks(provider, manifest, tasks, python, problems)
    if problems:
        raise ManifestError(manifest_path, problems)
    zl = digests.zl_files()
    matrix = {
        "schema": SCHEMA, "frozen": utc_stamp(), "manifest_sha256": digests.file_sha256(manifest_path),
        "zl": {"version": __version__, "files_sha256": digests.combined(zl), "files": zl},
        "python": python, "imports": imports,
        "compiler": bound_compiler, "compiler_env": bound_env,
        **from_manifest(manifest),
        "sources": sources, "tasks": tasks,
    }
    return Frozen(manifest=manifest, manifest_path=manifest_path, matrix=FrozenMatrix.from_json(matrix))


def from_manifest(manifest: Manifest) -> dict:
    """What the matrix takes from the manifest as written (its workloads' names, dtypes,
    timeouts and reasons under ``workloads``, the rest as the matrix keeps them): a frozen
    run compares it with the matrix, so an edited matrix whose seal was recomputed still
    disagrees with the manifest the seal binds."""
    return {
        "campaign": manifest.campaign, "claim": manifest.claim,
        "suite": manifest.suite, "backend": manifest.backend, "device": manifest.device,
        "device_name": manifest.device_name, "compile_only": manifest.compile_only,
        "target": manifest.target,
        "switch": {"name": manifest.switch, "a": manifest.a_value, "b": manifest.b_value},
        "control": {"env": dict(manifest.control_env)} if manifest.control_env else None,
        "measure": {"timer": manifest.timer, "replay_ms": manifest.replay_ms,
                    "level": manifest.level, "timeout_s": manifest.timeout_s,
                    **({"timing": manifest.timing} if manifest.timing else {}),
                    **({"l2": manifest.l2} if manifest.l2 else {})},
        "rounds": manifest.rounds if manifest.rounds is not None else "auto",
        "max_rounds": manifest.max_rounds, "threshold_pct": manifest.threshold_pct,
        "launch_floor": manifest.launch_floor, "gain_pct": manifest.gain_pct,
        "regression_pct": manifest.regression_pct, "correctness": manifest.correctness,
        **({"retuned": True} if manifest.retuned else {}),
    }


def workloads_of(manifest: Manifest) -> list[list]:
    """Each workload as the matrix's tasks keep what it says (see :func:`tasks_as_written`)."""
    default = manifest.sources[0].name if manifest.sources else None
    return [[w.source or default, list(w.dtypes), w.timeout_s or manifest.timeout_s, w.reason]
            for w in manifest.workloads]


def tasks_as_written(matrix: FrozenMatrix) -> list[list]:
    return [[t.get("source"), t.get("dtypes"), t.get("timeout_s"), t.get("reason")] for t in matrix.tasks]


def write(frozen: Frozen, out: Path) -> Path:
    """Write the frozen folder ``out``; a folder that exists and is not empty is refused
    (a frozen matrix is never replaced: freeze into a new folder)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInputError(f"{out} exists and is not an empty folder; a frozen campaign is never "
                            "overwritten: freeze into a new folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        manifest = out / MANIFEST_NAME
        shutil.copyfile(frozen.manifest_path, manifest)
        os.chmod(manifest, 0o444)
        matrix = atomic.write_json_atomic(out / MATRIX_NAME, frozen.matrix.to_json())
        os.chmod(matrix, 0o444)
        seal = atomic.write_json_atomic(out / SEAL_NAME, {
            "schema": SCHEMA, "manifest_sha256": digests.file_sha256(manifest),
            "matrix_sha256": digests.file_sha256(matrix)})
        os.chmod(seal, 0o444)
    except OSError as exc:
        raise BadInputError(f"cannot write the frozen campaign under {out}: {exc.strerror}") from None
    return out


def read(frozen_dir: Path) -> tuple[FrozenMatrix, dict]:
    """The matrix and seal of a frozen folder, or a one-line error."""
    frozen_dir = Path(frozen_dir)
    out = []
    for name in (MATRIX_NAME, SEAL_NAME):
        path = frozen_dir / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise BadInputError(f"cannot read {path}: {exc.strerror}; give a folder written by "
                                "zl freeze") from None
        except ValueError as exc:
            raise BadInputError(f"corrupt {path}: {' '.join(str(exc).split())[:100]}; freeze the "
                                "manifest again") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise BadInputError(f"{path} is not a zl freeze {name} of schema {SCHEMA}")
        out.append(data)
    return FrozenMatrix.from_json(out[0]), out[1]


# -- the checks behind plan() ------------------------------------------------------------


def _provider(host: PluginHost, name: str, problems: list[str]) -> Provider | None:
    providers = host.providers()
    if name not in providers:
        problems.append(f"suite: no suite {name!r} is installed (installed: "
                        f"{', '.join(sorted(providers)) or 'none'})")
        return None
    return providers[name]


def _backend(host: PluginHost, name: str, problems: list[str]) -> Backend | None:
    try:
        return host.get_backend(name)
    except ZlError as exc:
        problems.append(f"backend: {exc}")
        return None


def switch_vars(manifest_or_matrix: Manifest | FrozenMatrix) -> tuple[str, ...]:
    """The variables the campaign's sides set (its switch, a control side's): the cells
    inherit none of them, nor a member of their families."""
    if isinstance(manifest_or_matrix, FrozenMatrix):
        matrix = manifest_or_matrix
        return (matrix.switch[0], *(name for name, _ in matrix.control_env))
    return (manifest_or_matrix.switch, *dict(manifest_or_matrix.control_env))


def _default_path(manifest: Manifest) -> str | None:
    return str(manifest.sources[0].path) if manifest.sources else None


def _sources(provider: Provider, entries: tuple[SourceEntry, ...], problems: list[str]) -> list[dict]:
    out = []
    for i, entry in enumerate(entries):
        where = f"sources[{i}] ({entry.name})"
        try:
            provider.check_source(str(entry.path))
        except ZlError as exc:
            problems.append(f"{where}: {exc}")
            continue
        commit, found = source_state(provider, str(entry.path), entry.commit, "the manifest says")
        problems.extend(f"{where}: {p}" for p in found)
        out.append({"name": entry.name, "path": str(entry.path), "commit": commit})
    return out


def source_state(provider: Provider, path: str, expected: str | None,
                 expected_as: str) -> tuple[str | None, list[str]]:
    """The checkout's commit, and what keeps it from vouching for the campaign: another
    commit than ``expected``, or tracked files changed and not committed (or a versioned
    checkout that cannot say). Freezing and every later start judge a source by this."""
    commit = provider.source_commit(path)
    problems = []
    if commit != expected:
        problems.append(f"the checkout at {path} is at {commit or 'no known commit'}, "
                        f"{expected_as} {expected}")
    try:
        changed = provider.source_changes(path)
    except ZlError as exc:
        problems.append(str(exc))
    else:
        if changed:
            problems.append(f"{len(changed)} tracked file(s) changed and not committed "
                            f"({', '.join(changed[:3])}); commit or stash them, a commit "
                            "cannot vouch for them")
    return commit, problems


def _tasks(provider: Provider, manifest: Manifest, problems: list[str]) -> list[dict]:
    paths = {s.name: str(s.path) for s in manifest.sources}
    default = manifest.sources[0].name if manifest.sources else None
    tasks: list[dict] = []
    for i, work in enumerate(manifest.workloads):
        where = f"workloads[{i}] ({work.op})"
        name = work.source or default
        if work.source is not None and work.source not in paths:
            problems.append(f"{where}.source: no source named {work.source!r} "
                            f"(the manifest names {', '.join(paths) or 'none'})")
            continue
        source = paths.get(name) if name else None
        info = _target(provider, work, source, where, problems)
        if info is None:
            continue
        check, check_path = _check(provider, manifest, work, info, source, where, problems)
        files = {}
        root = Path(source) if source else None
        for path in [*provider.workload_files(info, source), *([check_path] if check_path else [])]:
            digest = digests.file_sha256(path)
            shown = digests.shown_path(path, root)
            if digest is None:
                problems.append(f"{where}: benchmark file {shown} cannot be read")
            files[shown] = digest
        tasks.append({"ordinal": len(tasks) + 1, "op": info.op, "source": name,
                      "op_file": info.op_file, "dtypes": list(work.dtypes),
                      "timeout_s": work.timeout_s or manifest.timeout_s, "reason": work.reason,
                      "check": check.to_json() if check else None,
                      "check_why": work.check_skip or work.check_reason, "files": files})
    return tasks


def _check(provider: Provider, manifest: Manifest, work: Workload, info: OpInfo, source: str | None,
           where: str, problems: list[str]) -> tuple[CheckSpec | None, Path | None]:
    """The workload's accuracy tests (the manifest's, else the provider's own) and the
    test file to bind; (None, None) where none run, with the problem noted if that is
    not what the manifest said."""
    if not manifest.correctness or work.check_skip:
        return None, None
    if not provider.supports_checks:
        problems.append(f"{where}.correctness: the {provider.name} suite runs no accuracy tests; "
                        "say correctness: false (manifest) or skip: <reason> (workload)")
        return None, None
    default = provider.default_check(info, source)
    if work.check_file:
        check = CheckSpec(file=work.check_file, select=work.check_select)
    elif default is not None:
        check = CheckSpec(file=default.file, select=work.check_select or default.select)
    else:
        problems.append(f"{where}.correctness: no accuracy tests found for {info.op}; name them "
                        "(correctness.file, correctness.select) or say why not (correctness.skip)")
        return None, None
    path = (Path(source) if source else Path(".")) / check.file
    if source and not path.is_file():
        problems.append(f"{where}.correctness.file: {check.file} is not in {source}")
        return check, None
    return check, path if source else None


def _collect_checks(provider: Provider, manifest: Manifest, tasks: list[dict], python: str,
                    problems: list[str]) -> None:
    """Each workload's accuracy tests as the cells' interpreter collects them: their count
    goes into the matrix (``check_tests``; None where the provider cannot tell), and a
    selection that selects no test, or tests that cannot be collected, is a problem now
    rather than an unclassable workload after its rounds.

    The collections run side by side (each is an interpreter importing torch and the
    suite's library: seconds of one core apiece); problems are noted in workload order."""
    paths = {s.name: str(s.path) for s in manifest.sources}
    jobs = [(i, task, CheckSpec(file=task["check"]["file"], select=tuple(task["check"]["select"])))
            for i, task in enumerate(tasks) if task.get("check")]

    def collect(job):
        _, task, check = job
        try:
            return provider.collect_check(check, source=paths.get(task["source"]), python=python), None
        except ZlError as exc:
            return None, exc

    workers = max(1, min(len(jobs), COLLECTIONS_AT_ONCE, (os.cpu_count() or 1) // 2))
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        results = list(pool.map(collect, jobs))
    finally:  # interrupted: the running collections are killed (interrupts.run), none starts
        pool.shutdown(cancel_futures=True)
    for (i, task, check), (found, error) in zip(jobs, results, strict=True):
        where = f"workloads[{i}] ({task['op']}).correctness"
        if error is not None:
            problems.append(f"{where}: {error}")
            continue
        task["check_tests"] = None if found is None else len(found)
        if found is not None and not found:
            problems.append(f"{where}: {check.file} {shlex.join(check.select)} selects no test; "
                            "fix the selection (correctness.select) or say why not "
                            "(correctness.skip)")


def _target(provider: Provider, work: Workload, source: str | None, where: str,
            problems: list[str]) -> OpInfo | None:
    """The workload's operator in the real tree, or None with its problem noted."""
    ops = provider.list_ops(source)
    found = [o for o in ops if o.op == work.op and (work.op_file is None or o.op_file == work.op_file)]
    if not found:
        near = sorted({o.op for o in ops if o.op.startswith(work.op[:3])})[:5]
        problems.append(f"{where}.op: no operator {work.op}"
                        + (f" in file {work.op_file}" if work.op_file else "")
                        + f" in the {provider.name} suite" + (f" at {source}" if source else "")
                        + (f" (near: {', '.join(near)})" if near else ""))
        return None
    if len(found) > 1:
        problems.append(f"{where}.op_file: {work.op} is in {', '.join(o.op_file for o in found)}; "
                        "name one")
        return None
    info = found[0]
    if info.skip:
        problems.append(f"{where}: the benchmark is skip-marked ({info.skip}); it would measure nothing")
    choices = provider.dtype_choices(source) if work.dtypes else ()
    for dtype in work.dtypes:
        problem = dtype_problem(work.op, dtype, runs=info.dtypes, choices=choices, suite=provider.name)
        if problem:
            problems.append(f"{where}.dtypes: {problem}")
    return info

