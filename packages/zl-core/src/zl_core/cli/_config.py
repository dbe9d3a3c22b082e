"""``--config PATH`` / ``--no-config`` for the campaign commands: a configuration file's
values (:mod:`zl_core.cli._config_file`) as the command line's defaults.

A key is a long option of the command without its dashes (``rounds``, ``flaggems-dir``;
``_`` may stand for ``-``), and its value goes through the very type function and
choices argparse applies to the option, so the file is refused with the command
line's own words, naming the file and the key. What the command line gives wins.

To tell a flag the user typed from its default, :func:`add_config_args` takes every
option's default out of the parser (``argparse.SUPPRESS``: argparse then sets only
what was typed) and keeps it; :func:`apply` puts back, per option, the typed value,
else the file's, else the default.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import os
import sys
from pathlib import Path

import attrs

from zl_core.app.options import ConfigUse
from zl_core.app.resolve import split_item
from zl_core.cli import _config_file as config_file
from zl_core.foundation.errors import UsageError

#: Options a file never sets: what picks the file, a campaign to continue, a dry run.
NOT_FROM_A_FILE = frozenset({"config", "no-config", "resume", "plan", "manifest"})
_TABLE = "_config_options"  # where the parser keeps its options' table in the namespace


@attrs.frozen
class _Option:
    action: argparse.Action
    default: object

    @property
    def key(self) -> str:
        return self.keys[0]

    @property
    def keys(self) -> tuple[str, ...]:
        """Every long option of the action (an alias too: ``--source``, ``--flaggems-dir``)."""
        return tuple(s[2:] for s in self.action.option_strings if s.startswith("--"))


def add_config_args(p: argparse.ArgumentParser, command: str) -> None:
    """Add ``--config``/``--no-config`` to ``p`` and let :func:`apply` tell typed flags
    from defaults. Call it last, once every option of ``p`` is added."""
    g = p.add_argument_group("configuration file")
    g.add_argument("--config", type=Path, metavar="PATH",
                   help=f"take option values from this file (a .toml file's [tool.zl] or a .yaml "
                   f"file; default: the nearest {config_file.PYPROJECT} with [tool.zl] or "
                   f"{config_file.YAML_NAME}, from this folder up to its repository's root); "
                   "flags given here override it")
    g.add_argument("--no-config", action="store_true", help="read no configuration file")
    options = {}
    # argparse keeps a parser's options in _actions only; nothing public lists them.
    for action in p._actions:
        long_option = any(s.startswith("--") for s in action.option_strings)
        if not long_option or action.dest in ("help", "config", "no_config"):
            continue
        options[action.dest] = _Option(action=action, default=action.default)
        action.default = argparse.SUPPRESS
    p.set_defaults(**{_TABLE: (command, options)})


def apply(args: argparse.Namespace) -> tuple[argparse.Namespace, ConfigUse | None]:
    """``args`` with every option set (typed, else from the file, else its default), and
    the file it took values from (None: none)."""
    command, options = vars(args).pop(_TABLE)
    typed = {dest for dest in options if hasattr(args, dest)}
    if args.config is not None and args.no_config:
        raise UsageError("--config and --no-config exclude each other; keep one")
    found = None
    fixed = next((d for d in ("resume", "manifest") if d in typed), None)
    if fixed is not None:
        _refuse_or_note_fixed(args, command, fixed)
    elif not args.no_config:
        found = config_file.load(args.config) if args.config else config_file.discover(Path.cwd())
    from_file = _values(found, command, options) if found else {}
    for dest, option in options.items():
        if dest not in typed:
            value = from_file[dest][1] if dest in from_file else _default(option)
            setattr(args, dest, value)
    if found is None:
        return args, None
    used = ConfigUse(path=found.path, sha256=found.sha256,
                     values={key: raw for dest, (key, _, raw) in from_file.items() if dest not in typed},
                     overridden=tuple(key for dest, (key, _, _) in from_file.items() if dest in typed))
    instead = f" (given on the command line instead: {', '.join(used.overridden)})" if used.overridden else ""
    # The interpreter a file names is shown, not only its key: cells will run it.
    taken = ", ".join(f"{key}={value}" if key == "python" else key for key, value in used.values.items())
    print(f"zl {command}: configuration {found.path}: {taken or 'no key taken'}{instead}", file=sys.stderr)
    return args, used


#: Options that fix every other one: a resumed campaign's recorded options, a frozen matrix.
_FIXED = {"resume": "--resume continues the campaign with the options it recorded",
          "manifest": "--manifest runs a frozen matrix as it was frozen"}


def _refuse_or_note_fixed(args: argparse.Namespace, command: str, fixed: str) -> None:
    """A resumed campaign or a frozen matrix decides the options; a file never changes them."""
    why = _FIXED[fixed]
    if args.config is not None:
        raise UsageError(f"{why}; drop --config")
    if args.no_config:
        return
    try:
        found = config_file.discover(Path.cwd())
    except UsageError as exc:
        print(f"zl {command}: note: configuration files are not read with --{fixed} ({exc})",
              file=sys.stderr)
        return
    if found is not None:
        print(f"zl {command}: note: {found.path} is not read: {why}", file=sys.stderr)


def _default(option: _Option) -> object:
    default = option.default
    convert = option.action.type
    if isinstance(default, str) and callable(convert):
        return convert(default)  # as argparse converts a string default
    return copy.copy(default)  # never the parser's own list


def _values(found: config_file.ConfigFile, command: str,
            options: dict[str, _Option]) -> dict[str, tuple[str, object, object]]:
    """dest -> (key, value, the value as written) for every key of the file that
    ``command`` reads: the shared keys, then its own table's (which win)."""
    by_key = {key: o for o in options.values() if o.key not in NOT_FROM_A_FILE
              and o.action.help != argparse.SUPPRESS for key in o.keys}
    taken: dict[str, tuple[str, object, object]] = {}
    for table in (None, command):
        for key, raw in (found.commands.get(table, {}) if table else found.shared).items():
            where = f"{found.path} {found.table_name(table)}"
            if not isinstance(key, str):
                raise UsageError(f"{where}: key {key!r} is not an option name; {config_file.IGNORE_HINT}")
            name = key.replace("_", "-")
            option = by_key.get(name)
            if option is None:
                raise UsageError(f"{where}: unknown key {key!r}: 'zl {command}' has no --{name}"
                                 f"{_did_you_mean(name, by_key)}; keys are its long options (zl "
                                 f"{command} --help), and a key only one command takes goes in "
                                 f"that command's table; fix the file, {config_file.IGNORE_HINT}")
            try:
                value = _converted(option.action, raw, found.folder)
            except _Refused as exc:
                raise UsageError(f"{where} {key}: {exc}; fix the file, give --{name} instead, "
                                 f"{config_file.IGNORE_HINT}") from None
            taken[option.action.dest] = (name, value, raw)
    return taken


def _did_you_mean(name: str, by_key: dict) -> str:
    close = difflib.get_close_matches(name, list(by_key), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Refused(Exception):
    """A value of the file the option does not take; the message in argparse's words."""


def _converted(action: argparse.Action, raw: object, folder: Path) -> object:
    """The value the command line would have given ``action`` for the file's ``raw``."""
    if action.nargs == 0:  # a flag: --force-switch
        if not isinstance(raw, bool):
            raise _Refused(f"expected true or false, got {config_file.describe(raw)}")
        return action.const if raw else False
    # Repeatable (--source, --a-env); argparse names its append action only privately.
    if isinstance(action, argparse._AppendAction):
        items = raw if isinstance(raw, list) else [raw]
        if isinstance(raw, dict):  # a-env = {NAME = "value"}
            items = [f"{name}={_text(value)}" for name, value in raw.items()]
        return [_one(action, item, folder) for item in items]
    if action.nargs in ("+", "*"):  # --ops a b c
        if not isinstance(raw, list) or (action.nargs == "+" and not raw):
            raise _Refused(f"expected a list, e.g. [\"{action.metavar or 'value'}\"], got "
                           f"{config_file.describe(raw)}")
        return [_one(action, item, folder) for item in raw]
    return _one(action, raw, folder)


def _text(raw: object) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise _Refused(f"expected a single value, got {config_file.describe(raw)}")
    return str(raw)


def _one(action: argparse.Action, raw: object, folder: Path) -> object:
    """One value through the option's type function and choices, as argparse does it."""
    text = _text(raw)
    try:
        value = action.type(text) if callable(action.type) else text
    except argparse.ArgumentTypeError as exc:
        raise _Refused(str(exc)) from None
    except (TypeError, ValueError):
        raise _Refused(f"invalid {getattr(action.type, '__name__', 'value')} value: {text!r}") from None
    if action.choices is not None and value not in action.choices:
        raise _Refused(f"invalid choice: {text!r} (choose from {', '.join(map(repr, action.choices))})")
    return _relative_to(folder, action.dest, value)


def _relative_to(folder: Path, dest: str, value: object) -> object:
    """A path the file gives, made relative to the file's folder (not the current one)."""
    if isinstance(value, Path):
        return _under(folder, str(value))
    if dest == "source":  # [NAME=]PATH
        try:
            name, path = split_item(str(value))
        except UsageError as exc:
            raise _Refused(str(exc)) from None
        return f"{name}={_under(folder, path)}" if name else str(_under(folder, path))
    if dest == "python" and os.sep in str(value):  # a bare name is looked up on PATH
        return str(_under(folder, str(value)))
    return value


def _under(folder: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else folder / path
