"""The README and the manual in docs/ say what zl does: the README stays a five-minute read,
every link resolves, every command they show is one zl (or nox) takes, and the tables that
mirror the code (commands, exit codes, summary.csv's columns) list what the code has.

Commands: each line of a fenced block that is not labelled as something else (```text,
```toml, ...) is a command. ``zl ...`` is parsed by zl's own parser, ``nox -s NAME -- ...``
must name a session of noxfile.py (and a session that forwards to ``zl NAME`` has its
arguments parsed as that command's), ``pip install ./path`` must name paths of this
checkout. Inline ``zl ...`` spans in the prose and tables must name a real command and only
options that command has. The main quick-start command also runs, whole, in
tests/test_readme_quickstart.py; the test command is what CI runs (.ci/run, checked here).
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import signal
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from zl_core.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

#: Fenced blocks with these labels hold no commands (output, listings, files).
NOT_COMMANDS = {"text", "toml", "yaml", "json", "python", "tsv", "csv", "diff"}
#: Programs a command block may run besides zl and nox; their lines are not parsed further.
OTHER_PROGRAMS = {"dask"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(label, body) of every fenced block."""
    return [(m.group(2), m.group(3))
            for m in re.finditer(r"^( *)```(\S*)\n(.*?)^\1```", text, re.MULTILINE | re.DOTALL)]


def _prose(text: str) -> str:
    """The page without its fenced blocks."""
    return re.sub(r"^( *)```\S*\n.*?^\1```", "", text, flags=re.MULTILINE | re.DOTALL)


# -- the README: short, and it states the test command ---------------------------------------------

def test_the_readme_is_read_in_five_minutes():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; the manual belongs in docs/"


def test_ci_runs_the_readmes_test_command_as_written():
    """.ci/run runs the README's test command, the very line, on a clean clone of main:
    that run is the command's end-to-end test (nox builds its own virtualenv and runs the
    suite in it), so the suite does not run it a second time inside itself."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- readme-quickstart: tests -->\s*```[a-z]*\n(.*?)\n```", text, re.DOTALL)
    assert block, "README.md has no quick-start block 'tests'"
    (command,) = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    assert "nox -s tests" in command
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert command in ci, f".ci/run does not run the README's test command {command!r} as written"


def test_the_readme_links_every_page_of_the_manual():
    text = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((docs/[^)#\s]+\.md)", text))
    pages = {_rel(p) for p in DOCS.glob("*.md")}
    assert sorted(pages - linked) == []


# -- links -----------------------------------------------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation gone, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", _prose(page.read_text(encoding="utf-8")),
                              re.MULTILINE):
        slug = _slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(page: Path) -> list[str]:
    text = _prose(page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
    return re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)


@pytest.mark.parametrize("page", [*PAGES, ROOT / "CHANGELOG.md"], ids=_rel)
def test_every_relative_link_resolves(page):
    broken = []
    for link in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto:
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {_rel(path)}")
    assert broken == []


def test_the_link_check_finds_a_broken_link_and_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## Exit codes of `zl report`\n")
    page.write_text("[a](other.md#exit-codes-of-zl-report) [b](gone.md) [c](other.md#nowhere) "
                    "`[d](code.md)` [e](https://example.org/x)\n")
    assert _links(page) == ["other.md#exit-codes-of-zl-report", "gone.md", "other.md#nowhere",
                            "https://example.org/x"]
    assert _anchors(tmp_path / "other.md") == {"other", "exit-codes-of-zl-report"}


# -- commands in fenced blocks ---------------------------------------------------------------------

def _nox_sessions() -> dict[str, str | None]:
    """Every session of noxfile.py, with the zl command it forwards to (or None)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    sessions: dict[str, str | None] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            target = call.func if call else deco
            if ast.unparse(target) != "nox.session":
                continue
            name = next((kw.value.value for kw in (call.keywords if call else [])
                         if kw.arg == "name" and isinstance(kw.value, ast.Constant)), node.name)
            forwards = [c.args[1].value for c in ast.walk(node)
                        if isinstance(c, ast.Call) and ast.unparse(c.func) == "forward"
                        and len(c.args) > 1 and isinstance(c.args[1], ast.Constant)]
            sessions[name] = forwards[0] if forwards else None
    return sessions


def _zl_parses(args: list[str]) -> str | None:
    """None when zl's parser takes ``zl ARGS``, else its complaint."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(args)
    except SystemExit as exc:
        return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {exc.code}"
    return None


def _logical_lines(body: str) -> list[str]:
    """The block's lines, a line ending in a backslash joined with the next."""
    out, pending = [], ""
    for line in body.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def _commands(body: str) -> list[str]:
    """The command lines of a fenced block: in a transcript (lines starting ``$ ``) those
    lines only, the rest being output; otherwise every line that is not blank."""
    lines = _logical_lines(body)
    if any(line.startswith("$ ") for line in lines):
        return [line[2:] for line in lines if line.startswith("$ ")]
    return [line for line in lines if line.strip()]


def _simple_commands(line: str) -> list[list[str]]:
    """A shell line's simple commands: split at ``&&``, ``||``, ``|`` and ``;``, with
    redirections and ``<( )`` process substitution unwrapped, comments dropped."""
    line = re.sub(r"<\((.*?)\)", r"; \1 ;", line)
    tokens = shlex.split(line, comments=True)
    commands, current = [], []
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token in ("&&", "||", "|", ";"):
            commands.append(current)
            current = []
        elif token in (">", ">>", "<", "2>"):
            skip = True
        else:
            current.append(token)
    commands.append(current)
    return [c for c in commands if c and c != ["source"]]


def _nox_takes(args: list[str], sessions: dict[str, str | None]) -> str | None:
    own, posargs = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
    if own in (["-l"], ["--list"]):
        return None
    if len(own) != 2 or own[0] not in ("-s", "--session"):
        return f"nox {' '.join(own)}: expected -s SESSION or -l"
    if own[1] not in sessions:
        return f"nox has no session {own[1]!r} (noxfile.py: {', '.join(sorted(sessions))})"
    command = sessions[own[1]]
    if command:
        return _zl_parses([command, *posargs])
    return f"session {own[1]} takes no arguments after --" if posargs else None


def _pip_takes(args: list[str]) -> str | None:
    if not args or args[0] != "install":
        return f"pip {' '.join(args)}: only pip install is shown"
    missing = [a for a in args[1:] if a.startswith("./") and not (ROOT / re.sub(r"\[.*\]$", "", a)).exists()]
    return f"no such package folder: {missing}" if missing else None


def check_command(words: list[str], sessions: dict[str, str | None]) -> str | None:
    """None when the command is one this checkout takes, else why not."""
    if words[:3] in (["python3", "-m", "nox"], ["python3", "-m", "pip"]):
        words = words[2:]
    program, args = words[0], words[1:]
    if program == "zl":
        return _zl_parses(args)
    if program == "nox":
        return _nox_takes(args, sessions)
    if program == "pip":
        return _pip_takes(args)
    if program in ("python", "python3") and args and args[0].endswith(".py"):
        return _script_takes(args[0], args[1:])
    if program in OTHER_PROGRAMS:
        return None
    return f"{program!r} is not a command the manual may show (label the block ```text if it is output)"


@cache
def _script_help(script: str) -> str | None:
    path = ROOT / script
    if not path.is_file():
        return None
    proc = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True,
                          timeout=120, check=False)
    return proc.stdout if proc.returncode == 0 else ""


def _script_takes(script: str, args: list[str]) -> str | None:
    """A script of this checkout, given options its ``--help`` lists (and, where it lists
    the choices of one, a value among them)."""
    text = _script_help(script)
    if text is None:
        return f"no such script: {script}"
    for i, word in enumerate(args):
        if not word.startswith("--"):
            continue
        choices = re.search(rf"{re.escape(word)} \{{([^}}]*)\}}", text)
        if word not in text.split():
            return f"{script} has no option {word}"
        if choices and (i + 1 >= len(args) or args[i + 1] not in choices.group(1).split(",")):
            return f"{script} {word} takes one of {{{choices.group(1)}}}"
    return None


def _page_commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for label, body in _fenced_blocks(page.read_text(encoding="utf-8")):
            if label in NOT_COMMANDS:
                continue
            found += [(_rel(page), line) for line in _commands(body)]
    return found


def test_every_command_in_the_readme_and_docs_is_one_zl_or_nox_takes():
    sessions = _nox_sessions()
    assert {"screen", "ab", "report", "run", "tests"} <= set(sessions)
    assert sessions["screen"] == "screen" and sessions["tests"] is None
    commands = _page_commands()
    shown = {page for page, _ in commands}
    assert {"README.md", "docs/usage.md", "docs/campaigns-at-scale.md",
            "docs/sealed-campaigns.md"} <= shown
    problems = [f"{page}: {line.strip()}: {why}" for page, line in commands
                for words in _simple_commands(line)
                if (why := check_command(words, sessions))]
    assert problems == []
    # An indented code block is no fenced block: its commands would go unchecked.
    indented = [f"{_rel(page)}: {line.strip()}" for page in PAGES
                for line in _prose(page.read_text(encoding="utf-8")).splitlines()
                if re.match(r"( {4,}|\t)(\$ )?(zl|nox|pip|python3?|dask) ", line)]
    assert indented == []


@pytest.mark.parametrize(("line", "why"), [
    ("zl screen --ops topk --no-such-option", "unrecognized arguments: --no-such-option"),
    ("zl scren --ops topk", "invalid choice: 'scren'"),
    ("nox -s screen -- --rounds 8", "unrecognized arguments: --rounds 8"),
    ("python3 -m pip install nox && python3 -m nox -s testz", "no session 'testz'"),
    ("pip install ./packages/zl-nothing", "no such package folder"),
    ("zl report: refusing to compare", "invalid choice: 'report:'"),
    ("runs/screen_<switch>_<time>/ campaign.json", "not a command the manual may show"),
    ("python benchmarks/stats_error_rates.py --only everything", "takes one of {campaign,"),
    ("python benchmarks/stats_error_rates.py --rounds 3", "has no option --rounds"),
    ("python benchmarks/no_such.py", "no such script"),
])
def test_the_command_check_refuses_what_zl_and_nox_would(line, why):
    sessions = _nox_sessions()
    problems = [check_command(words, sessions) for words in _simple_commands(line)]
    assert any(p and why in p for p in problems), problems


def test_the_command_check_reads_shell_lines_as_the_shell_would():
    assert _simple_commands("source <(zl completion bash)   # bash") == [["zl", "completion", "bash"]]
    assert _simple_commands("zl completion fish > ~/x/zl.fish") == [["zl", "completion", "fish"]]
    assert _simple_commands("python3 -m pip install nox && python3 -m nox -s tests") == [
        ["python3", "-m", "pip", "install", "nox"], ["python3", "-m", "nox", "-s", "tests"]]
    assert _commands("$ zl diff c mm\nmm in c: A=mm/A\n...\n") == ["zl diff c mm"]
    assert _commands("zl screen --a 1 \\\n    --b 2\n") == ["zl screen --a 1      --b 2"]


# -- commands in the prose and tables --------------------------------------------------------------

def _subparsers():
    parser = build_parser()
    return parser, parser._actions[-1].choices


def _inline_zl_spans() -> list[tuple[str, str]]:
    spans = []
    for page in PAGES:
        for span in re.findall(r"`(zl (?:[^`\n])+)`", _prose(page.read_text(encoding="utf-8"))):
            spans.append((_rel(page), span))
    return spans


def test_every_zl_command_named_in_the_prose_exists_with_the_options_it_shows():
    parser, commands = _subparsers()
    top = {o for a in parser._actions for o in a.option_strings}
    spans = _inline_zl_spans()
    assert len(spans) > 50
    problems = []
    for page, span in spans:
        words = [w for w in span.replace("\\|", "|").split() if w not in ("...", "/")]
        rest = words[1:]
        while rest and rest[0].startswith("-"):  # options before the command: zl -v screen, zl --color never
            rest = rest[2:] if rest[0] == "--color" else rest[1:]
        if not rest or rest[0] not in commands:
            problems.append(f"{page}: `{span}`: no such command")
            continue
        known = top | {o for a in commands[rest[0]]._actions for o in a.option_strings}
        for word in rest[1:]:
            option = word.split("=", 1)[0].strip("[]()")
            if option.startswith("--") and len(option) > 2 and option not in known:
                problems.append(f"{page}: `{span}`: zl {rest[0]} has no option {option}")
    assert problems == []


def test_the_commands_table_lists_every_command():
    _, commands = _subparsers()
    text = (DOCS / "usage.md").read_text(encoding="utf-8")
    table = text.split("## Commands\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `zl ")]
    listed = [re.match(r"\| `zl ([a-z]+)", row).group(1) for row in rows]
    assert sorted(listed) == sorted(commands)


# -- tables that mirror the code -------------------------------------------------------------------

def _documented_exit_codes(page: Path, heading: str) -> set[int]:
    section = page.read_text(encoding="utf-8").split(heading, 1)[1]
    table = section.split("|---|---|\n", 1)[1].split("\n\n", 1)[0]
    codes: set[int] = set()
    for row in table.splitlines():
        codes |= {int(c) for c in re.findall(r"\d+", row.split("|")[1])}
    return codes


def test_the_exit_code_table_lists_every_code_zl_ends_with():
    defined = set()
    for path in (ROOT / "packages" / "zl-core" / "src").rglob("*.py"):
        for value in re.findall(r"^EXIT_[A-Z_]+\s*(?::\s*int)?\s*=\s*(\d+)\s*$",
                                path.read_text(encoding="utf-8"), re.MULTILINE):
            defined.add(int(value))
    assert {0, 2, 3, 4, 5, 6, 7, 70, 124, 125} <= defined
    signals = {128 + s for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM)}
    # 1: `zl run` when its cell's process failed (cli/run.py returns it as a number).
    documented = _documented_exit_codes(DOCS / "exit-codes.md", "# Exit codes")
    assert documented == defined | signals | {1}
    report = _documented_exit_codes(DOCS / "report-json.md", "## Exit codes of `zl report`")
    assert report and report <= documented


def test_the_summary_csv_columns_are_the_ones_written():
    from zl_core.campaigns.summary import COLUMNS

    text = (DOCS / "outputs.md").read_text(encoding="utf-8")
    sentence = re.sub(r"\([^()]*\)", "", text.split("Its columns:", 1)[1].split(";", 1)[0])
    assert tuple(re.findall(r"`([a-z_]+)`", sentence)) == COLUMNS
