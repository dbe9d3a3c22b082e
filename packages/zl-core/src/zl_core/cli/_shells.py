"""Shell completion scripts for bash, zsh and fish, written from the argparse parser.

The parser is the one description of zl's commands and options, so the scripts are
generated from it (:func:`describe`) rather than kept by hand: a new option completes
as soon as it exists. argparse offers no public way to list a parser's arguments;
``_actions`` and the sub-parsers' ``choices`` are the attributes every completion
tool reads.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs

SHELLS = ("bash", "zsh", "fish")

#: What a value is completed with: nothing offered, one of the choices, a file, a folder.
TEXT, CHOICE, FILE, FOLDER = "text", "choice", "file", "folder"
#: Words of a metavar or destination that name a folder (a checkout, a campaign, a root).
_FOLDER_WORDS = ("DIR", "CAMPAIGN", "ROOT", "SCRATCH", "SCREEN", "PATH")


@attrs.frozen(kw_only=True)
class Argument:
    flags: tuple[str, ...]  # ("-q", "--quiet"); empty for a positional
    help: str
    value: str | None  # None: a flag that takes no value; else TEXT, CHOICE, FILE or FOLDER
    choices: tuple[str, ...] = ()
    repeatable: bool = False


@attrs.frozen(kw_only=True)
class Command:
    name: str
    help: str
    options: tuple[Argument, ...]
    positionals: tuple[Argument, ...]


def describe(parser: argparse.ArgumentParser) -> tuple[tuple[Argument, ...], tuple[Command, ...]]:
    """(the top level's options, every command) of ``parser``; hidden options left out."""
    top, _ = _arguments(parser)
    commands = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                options, positionals = _arguments(sub)
                commands.append(Command(name=name, help=helps.get(name, ""), options=options,
                                        positionals=positionals))
    return top, tuple(commands)


def _arguments(parser: argparse.ArgumentParser) -> tuple[tuple[Argument, ...], tuple[Argument, ...]]:
    options: list[Argument] = []
    positionals: list[Argument] = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        takes = action.nargs != 0
        arg = Argument(flags=tuple(action.option_strings), help=_first_clause(action.help or ""),
                       value=_value_kind(action) if takes else None,
                       choices=tuple(str(c) for c in action.choices or ()),
                       repeatable=isinstance(action, (argparse._AppendAction, argparse._AppendConstAction,
                                                      argparse._CountAction)))
        (options if action.option_strings else positionals).append(arg)
    return tuple(options), tuple(positionals)


def _value_kind(action: argparse.Action) -> str:
    if action.choices:
        return CHOICE
    metavar = action.metavar if isinstance(action.metavar, str) else (action.metavar or ("",))[0]
    name = f"{metavar or ''} {action.dest}".upper()
    if any(word in name for word in _FOLDER_WORDS):
        return FOLDER
    if action.type is Path or action.dest == "python":
        return FILE
    return TEXT


def _first_clause(text: str) -> str:
    """A help text short enough for a completion menu: up to its first ';' or '('."""
    for stop in ("; ", " ("):
        text = text.split(stop, 1)[0]
    return " ".join(text.split())[:80]


def script(shell: str, parser: argparse.ArgumentParser, version: str) -> str:
    top, commands = describe(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](top, commands, version)


# -- bash --------------------------------------------------------------------------------


def _bash(top: tuple[Argument, ...], commands: tuple[Command, ...], version: str) -> str:
    names = " ".join(c.name for c in commands)
    arms = [_bash_arm('""', top, (), names)]
    arms += [_bash_arm(c.name, c.options, c.positionals, "") for c in commands]
    return "\n".join([
        f"# bash completion for zl {version}, written by 'zl completion bash'.",
        "# Load it with: source <(zl completion bash), or save it as",
        "# ~/.local/share/bash-completion/completions/zl",
        "_zl_files() { COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null; }",
        "_zl_folders() { COMPREPLY=($(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null; }",
        "_zl() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local command="" word i options="" positional=""',
        "    COMPREPLY=()",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        word="${COMP_WORDS[i]}"',
        f'        case "$word" in {"|".join(c.name for c in commands)}) command="$word"; break ;; esac',
        "    done",
        '    case "$command" in',
        *arms,
        "    esac",
        '    if [[ "$cur" == -* || ( -n "$command" && -z "$positional" ) ]]; then',
        '        COMPREPLY=($(compgen -W "$options" -- "$cur"))',
        '    elif [[ "$positional" == "<files>" ]]; then _zl_files',
        '    elif [[ "$positional" == "<folders>" ]]; then _zl_folders',
        '    else COMPREPLY=($(compgen -W "$positional" -- "$cur"))',
        "    fi",
        "}",
        "complete -F _zl zl",
        "",
    ])


def _bash_arm(label: str, options: tuple[Argument, ...], positionals: tuple[Argument, ...],
              words: str) -> str:
    by_kind: dict[str, list[str]] = {}
    choices = []
    for o in options:
        if o.value == CHOICE:
            choices.append(f'                {"|".join(o.flags)}) COMPREPLY=($(compgen -W "{" ".join(o.choices)}" '
                           '-- "$cur")); return ;;')
        elif o.value is not None:
            by_kind.setdefault(o.value, []).extend(o.flags)
    values = [*choices]
    for kind, call in ((FILE, "_zl_files; return"), (FOLDER, "_zl_folders; return"), (TEXT, "return")):
        if by_kind.get(kind):
            values.append(f"                {'|'.join(by_kind[kind])}) {call} ;;")
    first = positionals[0] if positionals else None
    positional = words or ("" if first is None else " ".join(first.choices) if first.value == CHOICE
                           else "<files>" if first.value == FILE else "<folders>" if first.value == FOLDER
                           else "")
    flags = " ".join(f for o in options for f in o.flags)
    return "\n".join([f"        {label})",
                      *(['            case "$prev" in', *values, "            esac"] if values else []),
                      f'            options="{flags}"; positional="{positional}" ;;'])


# -- zsh ---------------------------------------------------------------------------------


def _zsh_text(text: str) -> str:
    """Safe inside a single-quoted _arguments spec's [description]."""
    return (text.replace("\\", "/").replace("[", "(").replace("]", ")").replace(":", " -")
            .replace("'", "'\\''"))


def _zsh_spec(arg: Argument) -> list[str]:
    action = {None: "", TEXT: ": : ", FILE: ": :_files", FOLDER: ": :_files -/",
              CHOICE: f": :({' '.join(arg.choices)})"}[arg.value]
    star = "*" if arg.repeatable else ""
    return [f"'{star}{flag}[{_zsh_text(arg.help)}]{action}'" for flag in arg.flags]


def _zsh_positional(i: int, arg: Argument) -> str:
    action = {TEXT: " ", FILE: "_files", FOLDER: "_files -/", CHOICE: f"({' '.join(arg.choices)})"}[arg.value or TEXT]
    return f"'{i}: :{action}'"


def _zsh(top: tuple[Argument, ...], commands: tuple[Command, ...], version: str) -> str:
    def args(specs: list[str], indent: str) -> str:
        return (" \\\n" + indent).join(["_arguments -s", *specs])

    arms = []
    for c in commands:
        specs = [s for o in c.options for s in _zsh_spec(o)]
        specs += [_zsh_positional(i, p) for i, p in enumerate(c.positionals, 1)]
        arms.append(f"        {c.name})\n          {args(specs, '            ')} && ret=0 ;;")
    listing = "\n".join(f"    '{c.name}:{_zsh_text(c.help)}'" for c in commands)
    top_specs = [s for o in top for s in _zsh_spec(o)] + ["'1: :->command'", "'*:: :->argument'"]
    return "\n".join([
        "#compdef zl",
        f"# zsh completion for zl {version}, written by 'zl completion zsh'.",
        "# Load it with: source <(zl completion zsh) after compinit, or save it as _zl in a",
        "# folder of $fpath.",
        "_zl() {",
        '  local curcontext="$curcontext" state line ret=1',
        "  typeset -A opt_args",
        "  local -a commands",
        "  commands=(",
        listing,
        "  )",
        "  " + args(top_specs, "    ").replace("_arguments -s", "_arguments -s -C", 1) + " && ret=0",
        "  case $state in",
        "    command) _describe -t commands 'zl command' commands && ret=0 ;;",
        "    argument)",
        '      curcontext="${curcontext%:*:*}:zl-$words[1]:"',
        "      case $words[1] in",
        *arms,
        "      esac ;;",
        "  esac",
        "  return ret",
        "}",
        "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then",
        '  _zl "$@"',
        "else",
        "  compdef _zl zl",
        "fi",
        "",
    ])


# -- fish --------------------------------------------------------------------------------


def _fish_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_line(condition: str, arg: Argument) -> str:
    flags = " ".join(f"-s {f[1:]}" if len(f) == 2 else f"-l {f[2:]}" for f in arg.flags)
    value = {None: "", TEXT: " -x", FILE: " -r -F", FOLDER: " -x -a '(__fish_complete_directories)'",
             CHOICE: f" -x -a {_fish_text(' '.join(arg.choices))}"}[arg.value]
    return f"complete -c zl -n {condition} {flags}{value} -d {_fish_text(arg.help)}"


def _fish(top: tuple[Argument, ...], commands: tuple[Command, ...], version: str) -> str:
    lines = [f"# fish completion for zl {version}, written by 'zl completion fish'.",
             "# Load it with: zl completion fish | source, or save it as",
             "# ~/.config/fish/completions/zl.fish",
             "complete -c zl -f"]
    lines += [_fish_line("__fish_use_subcommand", o) for o in top]
    lines += [f"complete -c zl -n __fish_use_subcommand -a {c.name} -d {_fish_text(c.help)}" for c in commands]
    for c in commands:
        seen = f"'__fish_seen_subcommand_from {c.name}'"
        lines += [_fish_line(seen, o) for o in c.options]
        first = c.positionals[0] if c.positionals else None
        if first is not None and first.value == CHOICE:
            lines.append(f"complete -c zl -n {seen} -a {_fish_text(' '.join(first.choices))}")
        elif first is not None and first.value == FILE:
            lines.append(f"complete -c zl -n {seen} -F")
        elif first is not None and first.value == FOLDER:
            lines.append(f"complete -c zl -n {seen} -a '(__fish_complete_directories)'")
    return "\n".join([*lines, ""])
