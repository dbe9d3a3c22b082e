"""The README's main quick-start command, run as written in a fresh virtualenv on a
fresh copy of this checkout, on this machine (no accelerator): the main job must set
itself up (nox, the zl packages, triton) and run the IR-only screen of the built-in
suite. The README's test command is the one CI runs on a clean clone, as written
(.ci/run; tests/test_docs.py checks the line is the README's).

The slowest test of the suite (a few minutes: a virtualenv, a triton install, fourteen
compile-only cells), marked ``readme``; CI runs it (``nox -s tests``), and
``-m "not readme"`` leaves it out while iterating.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.readme, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[1]


def readme_command(name: str) -> str:
    """The command in the code block under ``<!-- readme-quickstart: NAME -->``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- readme-quickstart: {name} -->\s*```[a-z]*\n(.*?)\n```", text, re.DOTALL)
    assert match, f"README.md has no quick-start block {name!r}"
    (command,) = [line for line in match.group(1).splitlines() if line.strip()]
    return command.strip()


def fresh_copy(dest: Path) -> Path:
    """This checkout's files as git sees them (tracked and untracked, not ignored)."""
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                             capture_output=True, check=False)
    if listing.returncode != 0:
        pytest.skip("not a git checkout: the README's commands are run from a clone")
    for rel in filter(None, listing.stdout.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """A fresh clone and an activated fresh virtualenv, as a newcomer would have."""
    work = tmp_path_factory.mktemp("readme")
    clone = fresh_copy(work / "zl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("ZL_", "PYTEST", "NOX")) and not k.endswith("_VISIBLE_DEVICES")
            and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX", "FLAGGEMS_DIR")}
    env = dict(keep, VIRTUAL_ENV=str(venv), PYTHONNOUSERSITE="1",
               PATH=os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]))
    return clone, venv, env


def run(command: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1800, stdin=subprocess.DEVNULL, check=False)


def test_the_main_job_sets_itself_up_and_screens_ir_only_without_a_device(machine):
    clone, venv, env = machine
    proc = run(readme_command("main"), clone, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    # It installed what it needed into the active (fresh) interpreter.
    assert "installing this checkout's zl packages" in out and "triton==3.6.0" in out
    assert (venv / "bin" / "nox").exists()
    # No device here: the IR-only screen, said as such, with the suite's verdicts.
    assert "no device found" in out and "IR-only" in out
    verdicts = dict(re.findall(r"^\s+(\w+)\s+(IR_CHANGED|NO_IR_DIFF|NO_TRITON|NO_ROWS|TIMEOUT)\b",
                               out, re.MULTILINE))
    assert verdicts["mm"] == verdicts["mm_f32"] == "IR_CHANGED"
    assert verdicts["add"] == verdicts["softmax"] == "NO_IR_DIFF"
    assert list((clone / "runs").glob("screen_DISABLE_MMA_V3_*/screen.json"))
    assert "next: A/B rounds" not in out
