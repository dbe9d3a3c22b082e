"""zl's command line follows the conventions: results on stdout, progress and diagnostics
on stderr as many as -q/-v ask for, --color with NO_COLOR and FORCE_COLOR, and a
completion script for bash, zsh and fish written from the parser itself. Real ``python -m
zl_core`` processes where the streams matter; the fake provider's real cell processes
where a campaign's detail does."""

from __future__ import annotations

import argparse
import logging
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from zl_core.cli import _logs, build_parser, main
from zl_core.foundation import console

ANSI_SGR = re.compile(r"\x1b\[[0-9;]*m")


def zl_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ZL_") and k not in ("FLAGGEMS_DIR", "NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env.update(extra)
    return env


def zl(*argv: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zl_core", *argv], capture_output=True, text=True,
                          check=False, timeout=600, cwd=cwd, env=zl_env(**env))


SCREEN = ("screen", "--compile-only", "--backend", "cuda", "--switch", "DISABLE_MMA_V3", "--ops", "add")


@pytest.fixture(scope="module")
def screens(tmp_path_factory):
    """The same IR-only screen of the builtin suite twice, real Triton: plain and with -q."""
    pytest.importorskip("triton")
    root = tmp_path_factory.mktemp("runs")
    plain = zl(*SCREEN, "--runs-root", str(root / "plain"))
    quiet = zl(*SCREEN, "-q", "--runs-root", str(root / "quiet"))
    return plain, quiet, root


def _campaign(root: Path) -> Path:
    (campaign,) = root.glob("screen_*")
    return campaign


# -- stdout holds the results, stderr the rest -----------------------------------------------


@pytest.mark.slow
def test_a_screen_prints_its_table_on_stdout_and_its_progress_on_stderr(screens):
    plain, _, root = screens
    assert plain.returncode == 0, plain.stderr
    campaign = _campaign(root / "plain")
    out = plain.stdout.splitlines()
    assert out[0] == "" and out[1] == f"screen: {campaign}  (IR-only: compiled, nothing timed)"
    assert re.match(r"  add +NO_IR_DIFF +kernels A/B 1/1", out[2])
    assert out[3].startswith("kernels A/B: distinct Triton kernels") and out[4].startswith("next: zl report")
    assert len(out) == 5  # nothing else: no progress line among the results
    err = plain.stderr
    assert "switch check: triton" in err and "zl screen: switch DISABLE_MMA_V3 (A=0 B=1) on cuda" in err
    assert "[1/2] add A [0] running ..." in err and "each cell line:" in err
    assert "add: NO_IR_DIFF" in err  # the verdict as it comes is progress; the table is the result


def test_quiet_silences_the_progress_and_keeps_the_results(screens):
    plain, quiet, root = screens
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    # The same result, but for the campaign's own folder name.
    same = quiet.stdout.replace(str(_campaign(root / "quiet")), "CAMPAIGN")
    assert same == plain.stdout.replace(str(_campaign(root / "plain")), "CAMPAIGN")


def test_quiet_keeps_the_one_line_error_and_its_exit_code(tmp_path):
    done = zl("screen", "-q", "--compile-only", "--backend", "cuda", "--switch", "DISABLE_MMA_V3",
              "--ops", "no_such_op", "--runs-root", str(tmp_path / "runs"))
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("zl screen: ") and "no_such_op" in line


def test_reports_diffs_and_listings_print_only_their_result(screens, tmp_path):
    _, _, root = screens
    campaign = str(_campaign(root / "plain"))
    report = zl("report", campaign)
    assert report.returncode == 0 and report.stderr == ""
    assert report.stdout.startswith("Screen") or "NO_IR_DIFF" in report.stdout
    written = zl("report", campaign, "--out", str(tmp_path / "r.txt"))
    assert written.stdout == "" and written.stderr == f"zl report: wrote {tmp_path / 'r.txt'}\n"
    assert zl("report", campaign, "--out", str(tmp_path / "q.txt"), "-q").stderr == ""
    assert (tmp_path / "q.txt").read_text() == (tmp_path / "r.txt").read_text() == report.stdout
    diff = zl("diff", campaign, "add")
    assert diff.returncode == 0 and diff.stderr == "" and diff.stdout.startswith(f"add in {Path(campaign).name}")
    ops = zl("ops", "--suite", "builtin")
    assert ops.stderr == "" and ops.stdout.startswith("suite builtin: 7 operator(s)")


def test_verbose_adds_debug_detail_on_stderr_only(tmp_path):
    plain, verbose = zl("ops", "--suite", "builtin"), zl("-v", "ops", "--suite", "builtin")
    assert verbose.stdout == plain.stdout
    assert "debug: plugin cuda loaded: zl_backend_cuda.plugin from zl-backend-cuda" in verbose.stderr
    more = zl("ops", "-vv", "--suite", "builtin")
    line = next(ln for ln in more.stderr.splitlines() if "plugin cuda loaded" in ln)
    assert re.match(r"\d{4}-\d\d-\d\d [\d:,]+ DEBUG +zl_core\.plugins\.calls: plugin cuda loaded", line)
    assert zl("ops", "-v", "-q", "--suite", "builtin").stderr == ""  # they count against each other


def test_a_campaign_says_each_cells_command_line_and_its_settings_under_v(fake_host, tmp_path, capsys):
    assert main(["screen", "--suite", "fake", "--ops", "gemm", "--runs-root", str(tmp_path / "a")]) == 0
    out, err = capsys.readouterr()
    assert "debug:" not in err and "[1/2] gemm A [0] running ..." in err
    assert main(["-v", "screen", "--suite", "fake", "--ops", "gemm", "--runs-root", str(tmp_path / "b")]) == 0
    v_out, v_err = capsys.readouterr()
    assert re.search(r"^debug: cell gemm A on fakegpu:0 in .*: .*fake_cell\.py", v_err, re.MULTILINE)
    assert re.search(r"^debug: zl screen: settings python=.*timeout_s=1200\.0", v_err, re.MULTILINE)
    assert re.search(r"^debug: zl screen: suite fake, .*backend fakegpu, device 0", v_err, re.MULTILINE)
    assert re.sub(r"\S*/screen_\S+", "X", v_out) == re.sub(r"\S*/screen_\S+", "X", out)  # the same result
    assert main(["screen", "-q", "--suite", "fake", "--ops", "gemm", "--runs-root", str(tmp_path / "c")]) == 0
    q_out, q_err = capsys.readouterr()
    assert q_err == "" and "gemm" in q_out and "IR_CHANGED" in q_out


def test_zl_run_echoes_the_cell_on_stderr_and_its_end_on_stdout(fake_host, tmp_path, capsys):
    argv = ["run", "--suite", "fake", "--op", "gemm"]
    assert main([*argv, "--out", str(tmp_path / "cell")]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("zl run: gemm on fakegpu:0 rc=0") and len(out.splitlines()) == 1
    assert "fake cell op=gemm" in err  # the cell's own output, echoed as it ran
    for quiet in ("-q", "--quiet"):  # the old 'do not echo the cell's output' is -q now
        assert main([*argv, quiet, "--out", str(tmp_path / quiet)]) == 0
        q_out, q_err = capsys.readouterr()
        assert q_err == "" and q_out.startswith("zl run: gemm on fakegpu:0 rc=0")


def test_q_and_v_go_before_or_after_the_command_and_count_against_each_other():
    parser = build_parser()
    for argv, level in ((["ops"], 0), (["-v", "ops"], 1), (["ops", "-v"], 1), (["-v", "ops", "-v"], 2),
                        (["-q", "ops"], -1), (["ops", "-qq"], -2), (["-v", "ops", "-q"], 0),
                        (["--verbose", "screen", "--quiet", "--quiet"], -1)):
        assert _logs.verbosity(parser.parse_args(argv)) == level, argv
    assert _logs.levels(-2) == (logging.ERROR, logging.WARNING)
    assert _logs.levels(-1) == (logging.WARNING, logging.WARNING)
    assert _logs.levels(0) == (logging.INFO, logging.WARNING)
    assert _logs.levels(1) == (logging.DEBUG, logging.WARNING)
    assert _logs.levels(2) == (logging.DEBUG, logging.DEBUG)
    for name in ("zl_core.cells.cell", "zl_flaggems.host.provider", "zl_backend_acme.plugin", "zl_report"):
        assert _logs.first_party(name)
    assert not _logs.first_party("distributed.worker") and not _logs.first_party("zlib_helper")


def test_logging_is_as_it_was_after_a_command(capsys):
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    assert main(["-vv", "backends"]) == 0
    assert root.handlers == handlers and root.level == level


# -- colour ------------------------------------------------------------------------------------


class _Tty:
    def isatty(self) -> bool:
        return True


def test_one_function_decides_colour(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    pipe, tty = object(), _Tty()
    assert console.wants_color(tty) and not console.wants_color(pipe) and not console.wants_color(None)
    monkeypatch.setenv("NO_COLOR", "")  # set but empty: no effect (no-color.org)
    assert console.wants_color(tty)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not console.wants_color(tty)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not console.wants_color(tty)  # NO_COLOR wins over FORCE_COLOR
    monkeypatch.delenv("NO_COLOR")
    assert console.wants_color(pipe)
    with console.color_choice("never"):
        assert not console.wants_color(tty)
    monkeypatch.setenv("NO_COLOR", "1")
    with console.color_choice("always"):
        assert console.wants_color(pipe)  # the flag overrides both variables
    assert not console.wants_color(tty)  # and is gone after the command


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two cells an A/B pair report can compare (the report's own test data)."""
    from test_report_pair import pair as make_pair

    a, b = make_pair(tmp_path_factory.mktemp("pair"))
    return str(a), str(b)


@pytest.mark.slow
def test_color_always_never_and_auto_on_a_pipe(pair):
    pytest.importorskip("zl_report")
    assert ANSI_SGR.search(zl("report", "--ab", *pair, "--color", "always").stdout)
    assert ANSI_SGR.search(zl("--color", "always", "report", "--ab", *pair).stdout)  # before the command too
    assert ANSI_SGR.search(zl("report", "--ab", *pair, "--color", "always", NO_COLOR="1").stdout)
    for argv, env in ((("--color", "never"), {}), (("--color", "never"), {"FORCE_COLOR": "1"}),
                      ((), {}), ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"})):
        done = zl("report", "--ab", *pair, *argv, **env)
        assert done.returncode == 0 and not ANSI_SGR.search(done.stdout), (argv, env)
    assert ANSI_SGR.search(zl("report", "--ab", *pair, FORCE_COLOR="1").stdout)


def _on_a_terminal(*argv: str, **env: str) -> str:
    """What zl writes to stdout when stdout is a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "zl_core", *argv], stdout=follower,
                            stderr=subprocess.PIPE, env=zl_env(**env))
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    return b"".join(chunks).decode(errors="replace")


def test_auto_colours_a_terminal_unless_no_color(pair):
    pytest.importorskip("zl_report")
    assert ANSI_SGR.search(_on_a_terminal("report", "--ab", *pair))
    assert not ANSI_SGR.search(_on_a_terminal("report", "--ab", *pair, NO_COLOR="1"))
    assert not ANSI_SGR.search(_on_a_terminal("report", "--ab", *pair, "--color", "never"))


def test_the_progress_bar_needs_progress_shown_and_a_terminal(monkeypatch):
    from zl_core.campaigns import progress

    monkeypatch.setattr(sys, "stderr", _Tty())
    with _logs.configured(0):
        assert progress.bar_wanted()
    with _logs.configured(-1):  # -q: no progress, so no bar
        assert not progress.bar_wanted()
    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))  # noqa: SIM115 - closed with the test
    with _logs.configured(0):
        assert not progress.bar_wanted()


# -- shell completion -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    root = tmp_path_factory.mktemp("completion")
    out = {}
    for shell in ("bash", "zsh", "fish"):
        done = zl("completion", shell)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        out[shell] = root / f"zl.{shell}"
        out[shell].write_text(done.stdout)
    return out


def _bash_complete(script: Path, *words: str) -> list[str]:
    """What bash's completion function offers for ``words`` (the last is being typed)."""
    quoted = " ".join(f"'{w}'" for w in words)
    driver = (f"source '{script}'\nCOMP_WORDS=({quoted})\nCOMP_CWORD={len(words) - 1}\n"
              "COMP_LINE=\"${COMP_WORDS[*]}\"\nCOMP_POINT=${#COMP_LINE}\n_zl\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", driver], capture_output=True,
                          text=True, check=True, timeout=30)
    return [w for w in done.stdout.splitlines() if w]


def test_bash_completes_commands_options_and_their_values(scripts, tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    bash = scripts["bash"]
    assert _bash_complete(bash, "zl", "scr") == ["screen"]
    assert _bash_complete(bash, "zl", "screen", "--op") == ["--ops"]
    assert _bash_complete(bash, "zl", "-v", "rep") == ["report"]
    assert set(_bash_complete(bash, "zl", "")) == set(build_parser()._actions[-1].choices)
    assert _bash_complete(bash, "zl", "screen", "--shapes", "") == ["file", "upstream"]
    assert _bash_complete(bash, "zl", "report", "--format", "m") == ["md"]
    assert _bash_complete(bash, "zl", "--color", "n") == ["never"]
    assert _bash_complete(bash, "zl", "completion", "") == ["bash", "zsh", "fish"]
    assert _bash_complete(bash, "zl", "ab", "--rounds", "") == []  # a number: nothing to offer
    assert set(_bash_complete(bash, "zl", "screen", "--ops", "mm", "--ti")) == {"--timer", "--timing", "--timeout"}
    assert "-q" in _bash_complete(bash, "zl", "diff", "-") and "--verbose" in _bash_complete(bash, "zl", "ops", "--v")
    (tmp_path / "runs_here").mkdir()
    (tmp_path / "runs_file").write_text("")
    assert _bash_complete(bash, "zl", "report", str(tmp_path / "runs_")) == [str(tmp_path / "runs_here")]
    assert str(tmp_path / "runs_file") in _bash_complete(bash, "zl", "screen", "--shape-file", str(tmp_path / "runs_"))


def test_every_option_of_every_command_is_in_the_bash_script(scripts):
    text = scripts["bash"].read_text()
    parser = build_parser()
    commands = parser._actions[-1].choices
    for name, sub in commands.items():
        offered = re.search(rf"\n        {name}\)\n(?:.*\n)*?            options=\"([^\"]*)\"", text).group(1)
        shown = {f for a in sub._actions if a.help != argparse.SUPPRESS for f in a.option_strings}
        assert shown and set(offered.split()) == shown, name
    assert "--per-device" in text and "--per-device" not in re.search(r"\n        ab\)\n(?:.*\n)*?.*options=.*",
                                                                      text).group(0)  # hidden in ab


def test_the_zsh_script_is_valid_and_registers_itself(scripts, tmp_path):
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    zsh = scripts["zsh"]
    subprocess.run(["zsh", "-n", str(zsh)], check=True, timeout=30)
    load = (f"autoload -U compinit && compinit -u -d {tmp_path}/zcd; "
            f"source {zsh}; print -r -- $_comps[zl]; whence -w _zl")
    done = subprocess.run(["zsh", "-f", "-c", load],
                          capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.split() == ["_zl", "_zl:", "function"]


def test_the_fish_script_is_valid_and_completes(scripts):
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")
    fish = scripts["fish"]
    subprocess.run(["fish", "--no-execute", str(fish)], check=True, timeout=30)

    def complete(line: str) -> list[str]:
        done = subprocess.run(["fish", "--no-config", "-c", f"source {fish}; complete -C '{line}'"],
                              capture_output=True, text=True, check=True, timeout=30)
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert complete("zl scr") == ["screen"]
    assert complete("zl screen --op") == ["--ops"]
    assert complete("zl completion ") == ["bash", "fish", "zsh"]


# -- help that says what the code does --------------------------------------------------------------


def _help(*argv: str) -> str:
    parser = build_parser()
    sub = parser._actions[-1].choices[argv[0]] if argv else parser
    return " ".join(sub.format_help().split())


def test_zl_ab_help_names_the_round_order_the_rounds_run_in():
    from zl_core.campaigns.ab_task import side_order
    from zl_core.stats.order import COUNTERBALANCED

    ran = ", ".join("".join(side_order(COUNTERBALANCED, r)) for r in range(1, 5))
    assert ran == "AB, BA, BA, AB"
    assert f"side order counterbalanced ({ran}, ...)" in _help("ab") and "alternat" not in _help("ab")


def test_zl_ab_refuses_compile_only_on_one_line_and_does_not_offer_it(fake_host, tmp_path, capsys):
    assert "--compile-only" not in _help("ab") and "--compile-only" in _help("screen")
    assert main(["ab", "--suite", "fake", "--ops", "gemm", "--compile-only", "--runs-root", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "compile-only cells time nothing" in line and "zl screen --compile-only" in line
    assert list(tmp_path.iterdir()) == []


def test_the_default_compile_target_the_help_points_to_is_listed(capsys):
    assert "zl backends lists each one's" in _help("screen")
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "compile_targets=cuda:<sm> (e.g. cuda:90, cuda:80) default=cuda:90" in out


def test_every_command_says_where_its_output_goes_and_takes_q_and_v():
    for name in build_parser()._actions[-1].choices:
        text = _help(name)
        assert "-q, --quiet" in text and "-v, --verbose" in text, name
    for name in ("screen", "ab", "report"):
        assert "--color {auto,always,never}" in _help(name)
    assert "--color" not in _help("ops")
    assert "progress goes to stderr" in _help("screen") and "progress goes to stderr" in _help("ab")


# -- the manual's table of environment variables (docs/environment.md) --------------------------------

REPO = Path(__file__).resolve().parents[1]


def _variables_page() -> str:
    """docs/environment.md from its table of the variables zl reads to its end (the variables
    zl writes into each cell)."""
    text = (REPO / "docs" / "environment.md").read_text(encoding="utf-8")
    return text.split("## Variables zl reads", 1)[1]


def _sources() -> dict[Path, str]:
    files = [p for p in (REPO / "packages").rglob("*.py") if "_template" not in p.parts]
    return {p: p.read_text(encoding="utf-8") for p in [*files, REPO / "noxfile.py"]}


def test_the_manual_names_every_variable_zl_reads_or_writes():
    from zl_core.campaigns import dask_executor
    from zl_core.cells import devicelock
    from zl_core.interface import contract
    from zl_core.plugins.host import PluginHost
    from zl_flaggems.common import gems_env

    sources = _sources()
    named = set()
    for text in sources.values():
        named |= set(re.findall(r"[\"'](ZL_[A-Z0-9_]+)[\"']", text))  # every ZL_* spelled in the code
        named |= set(re.findall(r"(?:environ\.get|getenv)\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']", text))
    named |= {v for k, v in vars(contract).items() if k.isupper() and isinstance(v, str) and v.startswith("ZL_")}
    named |= {devicelock.LOCK_DIR_ENV, dask_executor.SCRATCH_ENV, *gems_env.VENDOR_ENV_KEYS,
              gems_env.CACHE_DIR, gems_env.DB_URL, console.NO_COLOR_ENV, console.FORCE_COLOR_ENV,
              "COLUMNS", "VIRTUAL_ENV", "CONDA_PREFIX", "ROCR_VISIBLE_DEVICES"}
    named |= {key for b in PluginHost.load().backends() for key in b.visibility_env_keys}
    named |= {p.source_env for p in PluginHost.load().providers().values() if p.source_env}
    assert "ZL_PYTHON" in named and "ZL_LOCK_DIR" in named
    section = _variables_page()
    missing = sorted(name for name in named if f"`{name}`" not in section and f"`{name}=" not in section)
    assert missing == []


def test_every_variable_the_manual_names_is_in_the_code():
    code = "\n".join(_sources().values())
    listed = set(re.findall(r"`([A-Z][A-Z0-9_]{3,})(?:=[^`]*)?`", _variables_page()))
    assert {"ZL_PYTHON", "NO_COLOR", "FLAGGEMS_DIR"} <= listed
    assert sorted(name for name in listed if name not in code) == []
