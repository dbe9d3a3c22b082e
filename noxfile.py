"""nox sessions: the design card's commands, typed as users type them.

    nox -s screen -- --ops topk sort      # screen operators for IR changes
    nox -s ab -- --rounds 8               # time the IR_CHANGED ones
    nox -s report -- runs/ab_...          # render a campaign
    nox -s tests                          # the test suite (what CI runs)
    nox -s tests_lowest                   # its dependency tests at the lowest declared versions (CI too)
    nox -s lint                           # ruff and mypy (CI too, first)

screen, ab and report run in the interpreter that holds the user's torch and
triton (never an isolated virtualenv, which would hide a vendor build); the logic
lives in the zl packages, this file only dispatches. zl's own exit code is the
exit code of ``nox -s screen|ab|report|run`` (docs/exit-codes.md), not nox's blanket 1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PACKAGES = ("zl-core", "zl-backend-cuda", "zl-backend-musa", "zl-backend-rocm",
            "zl-backend-ascend", "zl-flaggems", "zl-report")
# The Triton the tests compile with, and the one the campaign sessions install where
# the user's interpreter has none (a vendor build, FlagTree included, imports as
# triton and is never replaced).
TRITON_PIN = "triton==3.6.0"
# The test tools, pinned so a run is repeatable (jsonschema checks the shipped schemas;
# pytest-xdist runs the suite on every core, its 3.8 at pytest 7.0 too); the dask extra
# the multi-host tests use.
XDIST_PIN = "pytest-xdist==3.8.0"
# What builds the editable zl packages in the sessions (editables: hatchling's editable
# wheels), installed first so that pip need not set up a build environment per package.
BUILD_PINS = ("hatchling==1.33.0", "editables==0.6")
TEST_TOOLS = ("pytest==9.2.0", *BUILD_PINS, "nox==2026.10.20", "jsonschema==4.26.0", XDIST_PIN)
DISTRIBUTED_PIN = "distributed==2026.8.0"
# At the lowest versions: the newest nox that installs beside attrs 23.1 (later ones
# need attrs 24.1); pytest comes from zl-flaggems' own lowest bound.
LOWEST_TEST_TOOLS = (*BUILD_PINS, "nox==2024.10.9", "jsonschema==4.26.0", XDIST_PIN)
# One worker a core, handed whole files: a module-scoped fixture (a compiled suite, a fresh
# virtualenv, a browser) is built once. In the files' collection order (tests/conftest.py
# puts those with a slow test first), not by their number of tests. (loadgroup would split
# files finer, but pytest-xdist 3.8 names a group in a way pytest 9 no longer reads.)
PARALLEL = ("-n", "auto", "--dist", "loadfile", "--no-loadscope-reorder")
# What tests_lowest runs: the tests whose outcome depends on a dependency's version, each
# declared lower bound exercised by them. The rest of the suite runs in `tests` alone:
# it exercises zl's own code over the same calls, and repeating all of it at the lowest
# versions would double CI's time for no bound it does not already check.
LOWEST_TESTS = (
    # what each package declares and imports; the third-party plugins' compat modules
    "tests/test_dependencies.py", "tests/test_check_compat.py", "tests/test_musa_compat.py",
    # pluggy: the plugin host, its hooks and entry points
    "tests/test_host_plugins.py", "tests/test_hooks_documented.py", "tests/test_cli_backends.py",
    # the command line (argparse, rich's console and progress)
    "tests/test_cli_conventions.py", "tests/test_cli_doctor.py", "tests/test_cli_telemetry.py",
    "tests/test_bad_input.py", "tests/test_campaign_output.py",
    # rich: the reports as text, Markdown, HTML; the schemas their models follow
    "tests/test_report_render.py", "tests/test_report_terminal_width.py", "tests/test_report_schema.py",
    # pyyaml: configuration files and shapes.yaml
    "tests/test_config_file.py", "tests/test_flaggems_shapes.py",
    # the statistics
    "tests/test_stats.py",
    # distributed: a real scheduler and workers
    "tests/test_dask_executor.py",
    # pytest (zl-flaggems' bound): the cells that collect and run a suite's benchmarks
    "tests/test_builtin_suite_protocol.py", "tests/test_flaggems_provider.py",
)
# The lint tools, pinned: a newer ruff or mypy adds checks, and lint stays what it checked.
# types-PyYAML types the yaml module; the other dependencies ship their own types.
LINT_TOOLS = ("ruff==0.17.6", "mypy==2.4.1", "types-PyYAML==6.0.12.20261122")
# The packages mypy checks in CI (mypy.ini holds the settings): every package, each clean,
# with no blanket ignore (a `# type: ignore[code]` names its code and says why).
TYPED = ("zl-core", "zl-flaggems", "zl-report", "zl-backend-cuda", "zl-backend-musa", "zl-backend-rocm",
         "zl-backend-ascend", "_template")

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


def user_python() -> str:
    """The interpreter holding the user's torch/triton: $ZL_PYTHON, the active
    virtualenv or conda env, else the python3 on PATH, else nox's own."""
    if os.environ.get("ZL_PYTHON"):
        return os.environ["ZL_PYTHON"]
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = os.environ.get(var)
        if prefix:
            candidate = Path(prefix) / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
            if candidate.exists():
                return str(candidate)
    return shutil.which("python3") or shutil.which("python") or sys.executable


# Exits non-zero when zl is missing or an entry point of this checkout's packages fails to load.
_ZL_PROBE = """\
import sys
from importlib.metadata import entry_points
import zl_core, zl_flaggems
ours = {name.replace("-", "_") for name in sys.argv[1:]}
for ep in entry_points(group="zl"):
    if ep.dist is not None and ep.dist.name.replace("-", "_") in ours:
        ep.load()
"""


def ensure_zl(session: nox.Session, python: str) -> None:
    """Install this checkout's zl packages into that interpreter if it lacks them, or
    if one of their ``zl`` entry points no longer loads (an editable install made
    before a module moved still names the old one).

    None of them declares torch or triton, so this never replaces a vendor build.
    """
    probe = subprocess.run([python, "-c", _ZL_PROBE, *PACKAGES], capture_output=True, check=False)
    if probe.returncode == 0:
        return
    session.log(f"installing this checkout's zl packages into {python}")
    args = [python, "-m", "pip", "install", "--quiet"]
    for name in PACKAGES:
        args += ["-e", str(ROOT / "packages" / name)]
    session.run(*args, external=True)


def ensure_triton(session: nox.Session, python: str) -> None:
    """Install the pinned Triton into that interpreter if it has none at all.

    Cells compile with it, and the IR-only screen needs nothing else (no torch, no
    device): Triton's wheels compile for GPU targets on any machine.
    """
    probe = subprocess.run([python, "-c", ("import importlib.util, sys; "
                            "sys.exit(importlib.util.find_spec('triton') is None)")],
                           capture_output=True, check=False)
    if probe.returncode == 0:
        return
    session.log(f"{python} has no triton: installing {TRITON_PIN} into it")
    session.run(python, "-m", "pip", "install", "--quiet", TRITON_PIN, external=True)


def forward(session: nox.Session, command: str, *, needs_triton: bool = True) -> None:
    python = user_python()
    if not (shutil.which(python) or (os.path.isfile(python) and os.access(python, os.X_OK))):
        # zl's usage error, in zl's words and with its code (docs/exit-codes.md)
        named = "$ZL_PYTHON" if os.environ.get("ZL_PYTHON") else "the interpreter found"
        print(f"nox -s {command}: {named} ({python}) is not an executable interpreter; point "
              "ZL_PYTHON at the python that holds your torch/triton, or unset it", file=sys.stderr)
        raise SystemExit(2)
    ensure_zl(session, python)
    if needs_triton:
        ensure_triton(session, python)
    # nox runs sessions from the noxfile's folder; paths the user typed (and the
    # default ./runs) mean the folder nox was invoked from.
    session.chdir(session.invoked_from)
    try:
        session.run(python, "-m", "zl_core", command, *session.posargs, external=True)
    except nox.command.CommandFailed as exc:
        # nox would turn every failure into exit 1; a CI job reading the exit-code
        # table (docs/exit-codes.md) needs zl's own code, so leave nox with it. SystemExit is
        # not an Exception, so nox's session runner lets it through.
        raise SystemExit(_return_code(exc) or 1) from None


def _return_code(exc: Exception) -> int | None:
    """The failed command's exit code: nox 2025 and later carry it, earlier ones only
    say it ("Returned code 3")."""
    code = getattr(exc, "return_code", None)
    if code is None:
        words = str(getattr(exc, "reason", "") or "").split()
        code = int(words[-1]) if words[:2] == ["Returned", "code"] and words[-1].isdigit() else None
    return code


@nox.session(python=False)
def screen(session: nox.Session) -> None:
    """Screen operators: did the compiler switch change their TTGIR?"""
    forward(session, "screen")


@nox.session(python=False)
def ab(session: nox.Session) -> None:
    """Paired A/B rounds for the IR_CHANGED operators of the latest screen."""
    forward(session, "ab")


@nox.session(python=False)
def report(session: nox.Session) -> None:
    """Render a screen or A/B campaign (caliber-checked)."""
    forward(session, "report", needs_triton=False)


@nox.session(python=False, default=False)
def run(session: nox.Session) -> None:
    """Run one measurement cell (zl run)."""
    forward(session, "run")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite in a fresh virtualenv (real Triton, no accelerator)."""
    # distributed: zl-core's dask extra (the multi-host tests use a real scheduler)
    session.install(*TEST_TOOLS, TRITON_PIN, DISTRIBUTED_PIN)
    session.install(*editable_packages())
    session.run("pytest", *(session.posargs or ["-q", *PARALLEL, "tests"]))


@nox.session(default=False)
def tests_lowest(session: nox.Session) -> None:
    """The tests that depend on a dependency's version (LOWEST_TESTS), at the lowest
    versions the zl packages declare (every ``>=`` bound, the dask extra's too), so a bound
    that is too low fails here."""
    pins = lowest_pins()
    session.log("lowest declared versions: " + " ".join(pins))
    session.install(*LOWEST_TEST_TOOLS, TRITON_PIN, *pins)
    # The zl packages without their dependencies: pip would otherwise upgrade the pins.
    session.install("--no-deps", *editable_packages())
    session.run("python", "-m", "pip", "check")
    session.run("pytest", "-p", "no:cacheprovider", *(session.posargs or ["-q", *PARALLEL, *LOWEST_TESTS]))


def editable_packages() -> list[str]:
    """pip's arguments for this checkout's packages, editable, built by the session's own
    BUILD_PINS: pip's isolated builds set up a hatchling per package, 40 s of each session."""
    return ["--no-build-isolation", *[f"-e{ROOT / 'packages' / name}" for name in PACKAGES]]


def lowest_pins() -> list[str]:
    """``name==X`` for every third-party ``name>=X`` the zl packages declare."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: nox itself depends on tomli there
        import tomli as tomllib
    pins: dict[str, str] = {}
    for name in PACKAGES:
        project = tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text())["project"]
        declared = [*project.get("dependencies", []),
                    *project.get("optional-dependencies", {}).get("dask", [])]
        for requirement in declared:
            dist, _, rest = requirement.partition(">=")
            dist = dist.strip().lower()
            if dist.startswith("zl-"):
                continue
            if not rest:
                raise SystemExit(f"{name}: dependency {requirement!r} has no lower bound (>=)")
            low = rest.split(",")[0].strip()
            if pins.setdefault(dist, low) != low:
                raise SystemExit(f"{dist}: the zl packages declare two lower bounds "
                                 f"({pins[dist]} and {low}); declare one")
    return [f"{dist}=={low}" for dist, low in sorted(pins.items())]


@nox.session(default=False)
def lint(session: nox.Session) -> None:
    """Static checks: ruff (ruff.toml) and mypy (mypy.ini)."""
    session.install(*LINT_TOOLS, *BUILD_PINS)
    # The packages bring the libraries they import (pluggy, attrs, rich, pytest, yaml) for
    # mypy to read; never torch or triton, which mypy.ini names as untyped.
    session.install(*editable_packages())
    session.run("ruff", "check", "packages", "tests", "noxfile.py")
    # Packages not named are read from source for their types, their own errors not shown.
    session.run("mypy", "--follow-imports=silent", *[f"packages/{name}/src" for name in TYPED])
