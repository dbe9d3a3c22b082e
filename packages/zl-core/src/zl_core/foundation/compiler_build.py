"""The compiler build as identity: a digest of every file of the package a cell imports
its compiler from (Python sources, the shared library, the bundled assembler), and the
commit where the build records one.

A development build of Triton or FlagTree keeps its version string from commit to commit,
so the version cannot tell two builds apart; their files can. Hashing a Triton install
reads hundreds of megabytes (triton 3.6.0's wheel: 349 files, 669 MB, most of it
``_C/libtriton.so``), so a cell's digest reuses each file's earlier digest while the file's
size, modification and change times and inode are unchanged (a per-package cache under
``$ZL_CACHE_DIR``, else ``$XDG_CACHE_HOME/zl``, else ``~/.cache/zl``); a frozen campaign's
checks read every byte (``cached=False``).

Which modules are the compiler is the backend's to say (``Backend.compiler_modules``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import subprocess
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from zl_core.foundation.atomic import write_json_atomic
from zl_core.foundation.module_origins import origins

log = logging.getLogger(__name__)

CACHE_ENV = "ZL_CACHE_DIR"
CACHE_FOLDER = "compiler-builds"
#: The caliber value of a cell whose interpreter imports none of the compiler's modules.
NONE = "none"
#: Characters of the combined digest the caliber field keeps (64 bits).
SHOWN = 16
_GIT_VERSION = re.compile(r"\+git\.?([0-9a-f]{7,40})\b")
_SKIPPED_DIRS = frozenset({"__pycache__"})
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
GIT_TIMEOUT_S = 10.0


def file_sha256(path: Path) -> str | None:
    """The file's SHA-256 in hex, None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None  # None differs from every digest: the check names the file as changed
    return digest.hexdigest()


def combined(digests: Mapping[str, str | None]) -> str:
    """One digest over named digests (sorted by name), so two sets compare at a glance."""
    digest = hashlib.sha256()
    for name in sorted(digests):
        digest.update(f"{name}\0{digests[name] or '-'}\n".encode())
    return digest.hexdigest()


@attrs.frozen(kw_only=True)
class Build:
    """One compiler module's build: where it is, the digest of its files, its commit."""

    module: str
    path: str  # the package folder (or the module's own file)
    digest: str  # combined() over its files' SHA-256
    files: Mapping[str, str | None] = attrs.field(repr=False)
    version: str | None = None
    commit: str | None = None

    def to_json(self, *, with_files: bool = False) -> dict:
        out = {"path": self.path, "digest": self.digest, "files": len(self.files),
               "version": self.version, "commit": self.commit}
        if with_files:
            out["files"] = dict(self.files)
        return out


def package_root(origin: str | os.PathLike) -> Path:
    """The folder of a package (its ``__init__``'s parent), else the module's own file."""
    origin = Path(origin)
    return origin.parent if origin.stem == "__init__" else origin


def tree_digests(root: Path, *, cached: bool = True) -> dict[str, str | None]:
    """``{relative path: SHA-256}`` of every file under ``root`` (symbolic links followed,
    bytecode left out), or of ``root`` itself when it is a file. ``cached``: a file whose
    size, times and inode match the cache keeps its cached digest."""
    root = Path(os.path.abspath(root))
    found = _files(root)
    with _lock:
        store = _load(root) if cached else {}
    fresh: dict[str, list] = {}
    out: dict[str, str | None] = {}
    for rel, path, st in found:
        if st is None:  # a dangling link, or a file gone while walking
            out[rel] = None
            continue
        key = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        hit = store.get(rel)
        sha = hit[4] if isinstance(hit, list) and len(hit) == 5 and hit[:4] == key else file_sha256(path)
        out[rel] = sha
        if sha is not None:
            fresh[rel] = [*key, sha]
    if cached and fresh != store:
        with _lock:
            _save(root, fresh)
    return out


def build_of(module: str, origin: str | os.PathLike, *, cached: bool = True) -> Build:
    """The build of ``module`` imported from ``origin`` (its ``__init__.py`` or file)."""
    root = package_root(origin)
    files = tree_digests(root, cached=cached)
    digest = combined(files)
    version, commit = _provenance(module, root, digest)
    return Build(module=module, path=str(root), digest=digest, files=files, version=version,
                 commit=commit)


def cell_builds(python: str, modules: Iterable[str], env: Mapping[str, str],
                cwd: str | os.PathLike | None) -> dict[str, Build]:
    """The builds of ``modules`` as a cell run by ``python`` in ``env`` and ``cwd`` would
    import them (a module it cannot import is left out). Where the interpreter imports
    them from is asked once per interpreter and import path in this process."""
    modules = tuple(modules)
    if not modules:
        return {}
    found = _where(python, modules, env, cwd)
    return {m: build_of(m, origin) for m, origin in found.items() if origin is not None}


def caliber_value(builds: Mapping[str, Build]) -> str:
    """The caliber field ``compiler_build``: the first characters of one digest over every
    compiler module's, or ``none``."""
    return build_id({m: b.digest for m, b in builds.items()})


def build_id(digests: Mapping[str, str]) -> str:
    """``compiler_build`` of modules with these digests (what identities and zl freeze show)."""
    return combined(digests)[:SHOWN] if digests else NONE


# -- where a cell imports the compiler from ------------------------------------------------

_where_memo: dict[tuple, dict[str, str | None]] = {}


def _where(python: str, modules: tuple[str, ...], env: Mapping[str, str],
           cwd: str | os.PathLike | None) -> dict[str, str | None]:
    # What decides where a module is found: the interpreter, its import path, its user
    # site, and the working folder only where a module of that name lies in it.
    shadows = cwd is not None and any(
        (Path(cwd) / m.split(".")[0]).exists() or (Path(cwd) / f"{m.split('.')[0]}.py").exists()
        for m in modules)
    key = (python, modules, *(env.get(k, "") for k in ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE",
                                                      "PYTHONUSERBASE", "PYTHONSAFEPATH")),
           str(cwd) if shadows else None)
    with _lock:
        known = _where_memo.get(key)
    if known is not None and all(o is None or os.path.exists(o) for o in known.values()):
        return known
    found = origins(python, list(modules), env=env, cwd=None if cwd is None else str(cwd))
    if any(found.values()):  # an interpreter that could not be asked is asked again next cell
        with _lock:
            _where_memo[key] = found
    return found


# -- provenance: the version and commit a build records -------------------------------------

_provenance_memo: dict[tuple[str, str], tuple[str | None, str | None]] = {}


def _provenance(module: str, root: Path, digest: str) -> tuple[str | None, str | None]:
    key = (str(root), digest)
    with _lock:
        if key in _provenance_memo:
            return _provenance_memo[key]
    info = _dist_info(root, module)
    version = commit = None
    if info is not None:
        version = _metadata_version(info)
        commit = _vcs_commit(info) or _version_commit(version)
    elif root.is_dir():  # run from a checkout (an editable build): the checkout's commit
        commit = _git_head(root)
    with _lock:
        _provenance_memo[key] = (version, commit)
    return version, commit


def _dist_info(root: Path, module: str) -> Path | None:
    """The installed distribution beside ``root`` that holds ``module``."""
    top = module.split(".")[0]
    try:
        infos = sorted(root.parent.glob("*.dist-info"))
    except OSError:
        return None
    for info in infos:
        try:
            names = (info / "top_level.txt").read_text(encoding="utf-8").split()
        except OSError:
            names = [info.name.split("-")[0].lower()]  # triton-3.6.0.dist-info
        if top in names:
            return info
    return None


def _metadata_version(info: Path) -> str | None:
    try:
        for line in (info / "METADATA").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip() or None
            if not line.strip():
                break
    except OSError:
        pass  # safe: a version is provenance only; the digest decides
    return None


def _vcs_commit(info: Path) -> str | None:
    """The commit pip recorded for an install from a version-control URL."""
    try:
        data = json.loads((info / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    commit = (data.get("vcs_info") or {}).get("commit_id") if isinstance(data, dict) else None
    return str(commit) if commit else None


def _version_commit(version: str | None) -> str | None:
    """The commit a development version names (``3.2.0+git4b3bb1f8``)."""
    found = _GIT_VERSION.search(version or "")
    return found.group(1) if found else None


def _git_head(root: Path) -> str | None:
    if not any((parent / ".git").exists() for parent in (root, *root.parents)):
        return None
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=GIT_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    head = proc.stdout.strip()
    return head if proc.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", head) else None


# -- the files, and the cache of their digests ----------------------------------------------

_lock = threading.Lock()
_memo: dict[str, dict[str, list]] = {}


def _files(root: Path) -> list[tuple[str, Path, os.stat_result | None]]:
    """``(relative path, path, stat)`` of every file to digest, in a stable order."""
    if not root.is_dir():
        return [(root.name, root, _stat(root))]
    out = []
    seen: set[str] = set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back up the tree: walked once
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(names):
            if name.endswith(_SKIPPED_SUFFIXES):
                continue
            path = Path(folder) / name
            st = _stat(path)
            if st is not None and not stat.S_ISREG(st.st_mode):
                continue
            out.append((path.relative_to(root).as_posix(), path, st))
    return out


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def cache_dir() -> Path:
    """Where the digests of compiler files are kept between processes."""
    given = os.environ.get(CACHE_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "zl"


def _cache_file(root: Path) -> Path:
    name = hashlib.sha256(str(root).encode()).hexdigest()[:24]
    return cache_dir() / CACHE_FOLDER / f"{name}.json"


def _load(root: Path) -> dict[str, list]:
    key = str(root)
    if key in _memo:
        return _memo[key]
    try:
        data = json.loads(_cache_file(root).read_text(encoding="utf-8"))
    except (OSError, ValueError, RuntimeError):  # RuntimeError: no home folder to find
        data = None
    files = data.get("files") if isinstance(data, dict) and data.get("root") == key else None
    _memo[key] = files if isinstance(files, dict) else {}
    return _memo[key]


def _save(root: Path, files: dict[str, list]) -> None:
    _memo[str(root)] = files
    try:
        write_json_atomic(_cache_file(root), {"root": str(root), "files": files}, indent=None)
    except (OSError, RuntimeError) as exc:  # safe: without the cache the files are read again
        log.debug("compiler digest cache for %s not written: %s", root, exc)
