"""zl's configuration file: ``[tool.zl]`` of a pyproject.toml, or a zl.yaml.

Both hold the same structure: keys shared by the campaign commands at the top
(``[tool.zl]``; a zl.yaml's top level) and one table per command (``[tool.zl.screen]``,
``[tool.zl.ab]``; ``screen:``, ``ab:``). :func:`discover` looks in a folder and then
its parents up to the first folder that holds a version-control root (``.git``,
``.hg``, ``.svn``): the project; outside a repository, in the folder itself only. The
nearest folder with a file that configures zl wins (a pyproject.toml without
``[tool.zl]`` does not). A file can name the interpreter cells run, so one that another
user could have written (another user's, or writable by every user, or in a folder every
user can write to, such as /tmp) is refused rather than read. What
the keys mean is the command line's business (:mod:`zl_core.cli._config`); this
module only finds and reads the file.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import stat
from pathlib import Path
from types import ModuleType

import attrs

from zl_core.foundation.errors import BadInputError
from zl_core.foundation.small_files import kind_of, read_small

PYPROJECT = "pyproject.toml"
YAML_NAME = "zl.yaml"
COMMANDS = ("screen", "ab")
VCS_ROOTS = (".git", ".hg", ".svn")
#: Said after every complaint about a file, so the user knows the way around it.
IGNORE_HINT = "or ignore configuration files with --no-config"
#: A ``[tool.zl]`` table header (or a ``[tool.zl.*]`` one), for Python 3.10, which
#: cannot parse TOML without a package zl does not require.
_TOOL_ZL_HEADER = re.compile(r"^\s*\[\s*tool\s*\.\s*zl\s*[\].]", re.MULTILINE)


@attrs.frozen(kw_only=True)
class ConfigFile:
    """One configuration file, read: its shared keys and each command's table, as written."""

    path: Path  # absolute
    sha256: str  # of the file's bytes
    toml: bool  # pyproject.toml's [tool.zl] (else a zl.yaml)
    shared: dict = attrs.field(factory=dict)  # key -> value, for every command
    commands: dict = attrs.field(factory=dict)  # command -> {key: value}

    @property
    def folder(self) -> Path:
        """What relative paths in the file are relative to."""
        return self.path.parent

    def table_name(self, command: str | None) -> str:
        """How the file spells the table of ``command`` (None: the shared keys)."""
        if self.toml:
            return f"[tool.zl.{command}]" if command else "[tool.zl]"
        return f"{command}:" if command else "top level"


def discover(start: Path) -> ConfigFile | None:
    """The configuration file nearest ``start`` (this folder, then its parents up to a
    version-control root), or None. Two in one folder are refused: which one was meant?"""
    start = Path(start).resolve()
    for folder in _project_folders(start):
        found = [f for f in (_pyproject(folder / PYPROJECT), _zl_yaml(folder / YAML_NAME)) if f]
        if len(found) == 2:
            raise BadInputError(f"both {found[0].path} ([tool.zl]) and {found[1].path} configure zl; "
                                f"keep one, name one with --config PATH, {IGNORE_HINT}")
        if found:
            _check_trusted(found[0].path)
            return found[0]
    return None


def _project_folders(start: Path) -> list[Path]:
    """``start`` and its parents up to the repository root; ``start`` alone outside one."""
    folders = []
    for folder in (start, *start.parents):
        folders.append(folder)
        if any((folder / marker).exists() for marker in VCS_ROOTS):
            return folders
    return [start]


def _check_trusted(path: Path) -> None:
    """A file found by discovery is read only where no other user could have put it there."""
    try:
        own, folder = path.stat(), path.parent.stat()
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror}; {IGNORE_HINT}") from None
    why = ("it is in a folder every user can write to" if folder.st_mode & stat.S_IWOTH
           else "every user can write to it" if own.st_mode & stat.S_IWOTH
           else "it belongs to another user" if own.st_uid not in (os.getuid(), 0) else "")
    if why:
        raise BadInputError(f"{path} is not read: {why}, so it need not be yours; move it into your "
                            f"project, name it with --config PATH if you trust it, {IGNORE_HINT}")


def load(path: Path) -> ConfigFile:
    """The file named by ``--config``: a ``.toml`` file's ``[tool.zl]`` or a ``.yaml`` file."""
    path = Path(path).expanduser().resolve()
    if path.exists() and not path.is_file():
        raise BadInputError(f"--config {path}: it is {kind_of(path.stat().st_mode)}, not a file; name "
                            "a configuration file, or drop --config")
    if not path.is_file():
        raise BadInputError(f"--config {path}: no such file; check the path, or drop --config")
    if path.suffix == ".toml":
        found = _pyproject(path)
        if found is None:
            raise BadInputError(f"--config {path}: it has no [tool.zl] table; add one, or name "
                                f"another file")
        return found
    if path.suffix in (".yaml", ".yml"):
        found = _zl_yaml(path)
        if found is None:  # gone since it was looked at
            raise BadInputError(f"--config {path}: no such file; check the path, or drop --config")
        return found
    raise BadInputError(f"--config {path}: expected a .toml file with a [tool.zl] table or a "
                        f".yaml file (like {YAML_NAME})")


#: A configuration file holds a few options; anything larger is another file.
MAX_CONFIG_BYTES = 1 << 20


def _read(path: Path) -> tuple[bytes, str]:
    data = read_small(path, MAX_CONFIG_BYTES, hint=IGNORE_HINT)
    return data, hashlib.sha256(data).hexdigest()


def _text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInputError(f"{path} is not UTF-8 text; save it as UTF-8, {IGNORE_HINT}") from None


def _pyproject(path: Path) -> ConfigFile | None:
    """The ``[tool.zl]`` table of a TOML file; None when there is no file or no such table."""
    if not path.is_file():
        return None
    data, digest = _read(path)
    text = _text(path, data)
    reader = _tomllib()
    if reader is None:  # Python 3.10
        if not _TOOL_ZL_HEADER.search(text):
            return None
        raise BadInputError(f"{path} has a [tool.zl] table, and Python 3.10 cannot read TOML "
                            f"(tomllib came with 3.11): put the keys in a {YAML_NAME} instead, "
                            f"run zl on Python 3.11+, {IGNORE_HINT}")
    try:
        document = reader.loads(text)
    except reader.TOMLDecodeError as exc:
        raise BadInputError(f"{path} is not valid TOML ({exc}); fix it, {IGNORE_HINT}") from None
    tool = document.get("tool")
    table = tool.get("zl") if isinstance(tool, dict) else None
    if table is None:
        return None
    config = ConfigFile(path=path.resolve(), sha256=digest, toml=True)
    return _split(config, table)


def _tomllib() -> ModuleType | None:
    """Python 3.11's TOML reader, None on 3.10, which has none (imported by name: mypy
    checks the code as 3.10 reads it)."""
    try:
        return importlib.import_module("tomllib")
    except ImportError:
        return None


def _zl_yaml(path: Path) -> ConfigFile | None:
    if not path.is_file():
        return None
    import yaml

    data, digest = _read(path)
    try:
        document = yaml.safe_load(_text(path, data))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInputError(f"{path} is not valid YAML ({problem}{at}); fix it, {IGNORE_HINT}") from None
    config = ConfigFile(path=path.resolve(), sha256=digest, toml=False)
    return _split(config, {} if document is None else document)


def _split(config: ConfigFile, table: object) -> ConfigFile:
    """The shared keys and the commands' tables of ``table``, each checked to be a table."""
    if not isinstance(table, dict):
        raise BadInputError(f"{config.path}: the {config.table_name(None)} must be a table of "
                            f"keys, not {describe(table)}; fix it, {IGNORE_HINT}")
    shared, commands = {}, {}
    for key, value in table.items():
        if not isinstance(key, str):
            raise BadInputError(f"{config.path}: key {key!r} at the {config.table_name(None)} is not "
                                f"a name; keys are option names like rounds, {IGNORE_HINT}")
        if key in COMMANDS:
            if not isinstance(value, dict):
                raise BadInputError(
                    f"{config.path}: {key!r} at the {config.table_name(None)} is the table of "
                    f"'zl {key}' keys, not {describe(value)}; write {config.table_name(key)} with "
                    f"its keys under it, {IGNORE_HINT}")
            commands[key] = value
        else:
            shared[key] = value
    return attrs.evolve(config, shared=shared, commands=commands)


def describe(value: object) -> str:
    """What kind of value the file holds, in the file's words (for complaints)."""
    kinds = {list: "a list", dict: "a table", str: "a string", bool: "true/false", int: "a number",
             float: "a number", type(None): "an empty value"}
    return kinds.get(type(value), f"a {type(value).__name__}")
