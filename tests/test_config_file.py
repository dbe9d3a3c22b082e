"""zl screen / zl ab options from a configuration file ([tool.zl] of pyproject.toml or
zl.yaml), as a user gets them: real ``python -m zl_core`` processes in a project folder
(the built-in suite's IR-only screen needs no device), and the sleepy suite's fake
cells (tests/fake_lanes) for A/B rounds and --resume."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from test_lanes_processes import LAUNCHER, fake_env
from zl_core.cli import _config, build_parser
from zl_core.cli import _config_file as config_file
from zl_core.foundation.errors import BadInputError
from zl_core.store.record import read_campaign

DATA = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data"
IR_ONLY = "backend: cuda\nswitch: DISABLE_MMA_V3\nscreen:\n  compile-only: true\n"


@pytest.fixture
def project(tmp_path):
    """A repository folder: discovery stops at its .git, whatever lies above tmp_path."""
    (tmp_path / ".git").mkdir()
    return tmp_path


def zl(cwd: Path, *argv: str, launcher: bool = False, env: dict | None = None) -> subprocess.CompletedProcess:
    program = [str(LAUNCHER)] if launcher else ["-m", "zl_core"]
    environ = env or {k: v for k, v in os.environ.items() if k not in ("DISABLE_MMA_V3", "ZL_RUNS_ROOT")}
    return subprocess.run([sys.executable, *program, *argv], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=300, check=False, stdin=subprocess.DEVNULL)


def only_campaign(root: Path, kind: str = "screen") -> Path:
    (campaign,) = root.glob(f"{kind}_*")
    return campaign


def test_a_zl_yaml_above_the_current_folder_sets_the_screen_and_campaign_json_records_it(project):
    config = project / "zl.yaml"
    config.write_text(IR_ONLY + "  ops: [add]\n  runs_root: out\n")
    (project / "sub").mkdir()
    proc = zl(project / "sub", "screen")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"zl screen: configuration {config}: backend, switch, compile-only, ops, runs-root" in proc.stderr
    # runs_root is relative to the file's folder, not to the folder zl ran in.
    assert not (project / "sub" / "out").exists()
    meta = read_campaign(only_campaign(project / "out")).to_json()
    assert meta["ops"] == ["add"] and meta["switch"] == "DISABLE_MMA_V3" and meta["compile_only"]
    assert meta["config"] == {
        "path": str(config), "sha256": hashlib.sha256(config.read_bytes()).hexdigest(),
        "values": {"backend": "cuda", "switch": "DISABLE_MMA_V3", "compile-only": True,
                   "ops": ["add"], "runs-root": "out"},
        "overridden": []}
    assert meta["options"]["runs_root"] == str(project / "out")
    assert "config" not in meta["options"]


@pytest.mark.slow
def test_the_command_line_overrides_pyproject_and_a_commands_table_overrides_the_shared_keys(project):
    config = project / "pyproject.toml"
    config.write_text('[project]\nname = "mine"\n\n[tool.zl]\nbackend = "cuda"\nswitch = "DISABLE_MMA_V3"\n'
                      'ops = ["mm"]\ntimeout = 600\nruns-root = "out"\n\n'
                      '[tool.zl.screen]\ncompile_only = true\nops = ["softmax"]\n\n'
                      '[tool.zl.ab]\nrounds = 6\n')
    proc = zl(project, "screen", "--ops", "add", "--timeout", "900")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    meta = read_campaign(only_campaign(project / "out")).to_json()
    assert meta["ops"] == ["add"] and meta["options"]["measure"]["timeout_s"] == 900.0
    assert meta["config"]["values"] == {"backend": "cuda", "switch": "DISABLE_MMA_V3",
                                        "runs-root": "out", "compile-only": True}
    assert meta["config"]["overridden"] == ["ops", "timeout"]
    assert "(given on the command line instead: ops, timeout)" in proc.stderr
    # --no-config: the built-in suite's own default switch, not the file's.
    plan = zl(project, "screen", "--no-config", "--plan", "--backend", "cuda", "--compile-only")
    assert plan.returncode == 0 and "configuration" not in plan.stderr


def test_a_value_the_command_line_refuses_is_refused_in_the_same_words_naming_the_file(project):
    (project / "pyproject.toml").write_text("[tool.zl.ab]\nrounds = 0\n")
    from_file = zl(project, "ab")
    typed = zl(project, "ab", "--rounds", "0", "--no-config")
    assert from_file.returncode == typed.returncode == 2
    said = "expected a number from 1 to 1000, got 0"
    assert said in typed.stderr
    assert from_file.stderr.splitlines() == [
        (f"zl ab: {project / 'pyproject.toml'} [tool.zl.ab] rounds: {said}; fix the file, give "
         "--rounds instead, or ignore configuration files with --no-config")]


@pytest.mark.parametrize(("name", "text", "argv", "says"), [
    ("pyproject.toml", "[tool.zl.ab]\nroundz = 4\n", ("ab",),
     "[tool.zl.ab]: unknown key 'roundz': 'zl ab' has no --roundz (did you mean 'rounds'?)"),
    ("pyproject.toml", "[tool.zl]\nrounds = 4\n", ("screen",),
     "[tool.zl]: unknown key 'rounds': 'zl screen' has no --rounds"),
    ("zl.yaml", "ab:\n  per-device: 2\n", ("ab",), "unknown key 'per-device'"),
    ("zl.yaml", "resume: runs/x\n", ("screen",), "unknown key 'resume'"),
    ("zl.yaml", "timeout: soon\n", ("screen",), "top level timeout: expected a number, got 'soon'"),
    ("zl.yaml", "timer: fast\n", ("screen",),
     "timer: invalid choice: 'fast' (choose from 'auto', 'graph', 'direct')"),
    ("zl.yaml", "screen:\n  compile-only: 1\n", ("screen",), "screen: compile-only: expected true or false"),
    ("zl.yaml", "ops: add\n", ("screen",), "ops: expected a list"),
    ("zl.yaml", "timeout: [1, 2]\n", ("screen",), "timeout: expected a single value, got a list"),
    ("zl.yaml", "screen: fast\n", ("screen",), "'screen' at the top level is the table of 'zl screen' keys"),
    ("zl.yaml", "- ops\n", ("screen",), "the top level must be a table of keys, not a list"),
    ("zl.yaml", "ops: [add\n", ("screen",), "zl.yaml is not valid YAML ("),
    ("pyproject.toml", "[tool.zl\nops = 1\n", ("screen",), "pyproject.toml is not valid TOML ("),
    ("zl.yaml", "ops: [add]\n", ("screen", "--config", "nosuch.yaml"), "--config"),
    ("zl.yaml", "ops: [add]\n", ("screen", "--config", "zl.yaml", "--no-config"),
     "--config and --no-config exclude each other"),
])
def test_a_bad_file_is_one_line_and_exit_2_naming_the_file(project, name, text, argv, says):
    (project / name).write_text(text)
    proc = zl(project, *argv, "--runs-root", str(project / "runs"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and not (project / "runs").exists()
    assert (str(project / name) in lines[0]) or "nosuch.yaml" in lines[0] or "--no-config" in argv


def test_two_files_in_one_folder_are_refused_unless_one_is_named(project):
    (project / "pyproject.toml").write_text('[tool.zl]\nbackend = "cuda"\n')
    (project / "zl.yaml").write_text(IR_ONLY + "  ops: [add]\n")
    proc = zl(project, "screen", "--plan")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"zl screen: both {project / 'pyproject.toml'} ([tool.zl]) and {project / 'zl.yaml'} configure "
        "zl; keep one, name one with --config PATH, or ignore configuration files with --no-config")
    named = zl(project, "screen", "--plan", "--config", "zl.yaml")
    assert named.returncode == 0, named.stderr
    assert f"configuration {project / 'zl.yaml'}" in named.stderr and "1 operator(s)" in named.stdout


def test_discovery_stops_at_the_repository_root_and_skips_a_pyproject_without_tool_zl(project):
    (project / "zl.yaml").write_text("ops: [nosuch\n")  # above the repository: never read
    repo = project / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "other"\n')
    proc = zl(repo, "screen", "--plan", "--backend", "cuda", "--compile-only", "--ops", "add")
    assert proc.returncode == 0, proc.stderr
    assert "configuration" not in proc.stderr


def test_paths_in_the_file_are_relative_to_its_folder(project, monkeypatch):
    (project / "zl.yaml").write_text(
        "flaggems-dir: [../FlagGems, vllm=~/FlagGems-vllm]\nshape_file: shapes.yaml\n"
        "python: venv/bin/python\nscreen:\n  dismiss: /abs/dismissed.txt\n"
        "a-env: {TRITON_X: 1}\nb-env: [TRITON_Y=2]\n")
    (project / "deep").mkdir()
    monkeypatch.chdir(project / "deep")
    args, used = _config.apply(build_parser().parse_args(["screen"]))
    assert args.source == [str(project / "../FlagGems"),
                                 "vllm=" + str(Path("~/FlagGems-vllm").expanduser())]
    assert args.shape_file == project / "shapes.yaml" and args.python == str(project / "venv/bin/python")
    assert args.dismiss == Path("/abs/dismissed.txt")
    assert args.a_env == [("TRITON_X", "1")] and args.b_env == [("TRITON_Y", "2")]
    assert used.values["flaggems-dir"] == ["../FlagGems", "vllm=~/FlagGems-vllm"]  # as written
    # A bare interpreter name is looked up on PATH, as on the command line.
    (project / "zl.yaml").write_text("python: python3\n")
    args, _ = _config.apply(build_parser().parse_args(["screen", "--a-env", "A=1"]))
    assert args.python == "python3" and args.a_env == [("A", "1")]
    # Without a file every option keeps the command line's default.
    (project / "zl.yaml").unlink()
    args, used = _config.apply(build_parser().parse_args(["ab"]))
    assert used is None and args.rounds == 8 and args.a_env == [] and args.source is None
    assert args.python == sys.executable and args.resume is None


@pytest.mark.slow
def test_a_resumed_campaign_keeps_its_recorded_options_and_reads_no_file(project):
    env = fake_env(project)
    env.pop("ZL_RUNS_ROOT")
    config = project / "zl.yaml"
    config.write_text("suite: sleepy\nswitch: FAKE_SWITCH\nruns-root: runs\n"
                      "ab:\n  ops: [abs]\n  rounds: 4\n  allow-no-ir-diff: true\n  telemetry-interval: 0\n")
    first = zl(project, "ab", launcher=True, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    campaign = only_campaign(project / "runs", "ab")
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["rounds"] == 4 and meta["config"]["values"]["rounds"] == 4
    recorded_config = meta["config"]
    meta["state"] = "interrupted"  # as a kill leaves it, its last round half-written
    (campaign / "campaign.json").write_text(json.dumps(meta))
    for side in "AB":
        (campaign / "abs" / "r04" / side / "run_identity.json").unlink()
    # The file changes before the resume: a value it would give anew is not taken.
    config.write_text(config.read_text().replace("rounds: 4", "rounds: 6"))
    named = zl(project, "ab", "--resume", str(campaign), "--config", "zl.yaml", launcher=True, env=env)
    assert named.returncode == 2
    assert named.stderr.strip() == ("zl ab: --resume continues the campaign with the options it recorded; "
                                    "drop --config")
    resumed = zl(project, "ab", "--resume", str(campaign), launcher=True, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (f"zl ab: note: {config} is not read: --resume continues the campaign with the options it "
            "recorded") in resumed.stderr
    meta = read_campaign(campaign).to_json()
    assert meta["state"] == "complete" and meta["rounds"] == 4 and meta["config"] == recorded_config
    assert sorted(p.name for p in (campaign / "abs").glob("r0*")) == ["r01", "r02", "r03", "r04"]


def test_python_3_10_reads_zl_yaml_and_names_a_tool_zl_table_it_cannot_read(project, monkeypatch):
    monkeypatch.setitem(sys.modules, "tomllib", None)  # import tomllib fails, as on 3.10
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert config_file.discover(project) is None
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[ tool.zl.screen ]\nops = ["add"]\n')
    with pytest.raises(BadInputError, match=r"Python 3.10 cannot read TOML.*zl.yaml"):
        config_file.discover(project)


def _campaign_files() -> list[tuple[str, bytes]]:
    found = [(str(p.relative_to(DATA)), p.read_bytes()) for p in DATA.rglob("campaign.json")]
    for archive in DATA.rglob("*.tgz"):
        with tarfile.open(archive) as tar:
            found += [(f"{archive.name}:{m.name}", tar.extractfile(m).read())
                      for m in tar.getmembers() if m.name.endswith("campaign.json")]
    return found


def test_campaigns_written_before_configuration_files_still_read(tmp_path):
    files = _campaign_files()
    assert len(files) >= 5
    for name, data in files:
        (tmp_path / "campaign.json").write_bytes(data)
        assert read_campaign(tmp_path).config is None, name
    meta = json.loads(files[0][1])
    meta["config"] = {"path": "/p/zl.yaml", "sha256": "0" * 63, "values": {}, "overridden": []}
    (tmp_path / "campaign.json").write_text(json.dumps(meta))
    with pytest.raises(BadInputError, match=r"'config' is .*expected the configuration file used"):
        read_campaign(tmp_path)


def test_the_manuals_example_is_a_file_both_commands_take(project, monkeypatch):
    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    section = page.split("# A configuration file", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    (project / "pyproject.toml").write_text(example)
    monkeypatch.chdir(project)
    screen, used = _config.apply(build_parser().parse_args(["screen"]))
    assert screen.source == [str(project / "../FlagGems")] and screen.devices == "all"
    assert screen.ops == ["topk", "sort", "mm:mm:float16"] and screen.per_device == 4
    assert used.values["switch"] == "DISABLE_MMA_V3" and "rounds" not in used.values
    ab, _ = _config.apply(build_parser().parse_args(["ab", "--rounds", "8"]))
    assert ab.rounds == 8 and ab.a_env == [("TRITON_PRINT_AUTOTUNING", "1")] and ab.per_device == 1


def test_outside_a_repository_only_the_current_folder_is_read(tmp_path):
    (tmp_path / "zl.yaml").write_text("ops: [nosuch\n")  # a parent, and no repository: never read
    (tmp_path / "work").mkdir()
    proc = zl(tmp_path / "work", "screen", "--plan", "--backend", "cuda", "--compile-only", "--ops", "add")
    assert proc.returncode == 0, proc.stderr
    assert "configuration" not in proc.stderr
    (tmp_path / "work" / "zl.yaml").write_text(IR_ONLY)
    here = zl(tmp_path / "work", "screen", "--plan", "--ops", "add")
    assert here.returncode == 0, here.stderr
    assert f"configuration {tmp_path / 'work' / 'zl.yaml'}: backend, switch, compile-only" in here.stderr


@pytest.mark.parametrize("who", ["folder", "file", "owner"])
def test_a_file_another_user_could_have_written_is_refused_before_anything_runs(project, who):
    """A file can name the interpreter cells run (python:): one in a folder every user can
    write to (/tmp), writable by every user, or another user's is not read."""
    folder = project / "shared"
    folder.mkdir()
    config = folder / "zl.yaml"
    config.write_text(IR_ONLY + "python: /tmp/evil/python\n")
    if who == "folder":
        folder.chmod(0o1777)  # like /tmp: sticky, and every user can write
        why = "it is in a folder every user can write to"
    elif who == "file":
        config.chmod(0o666)
        why = "every user can write to it"
    else:
        if os.getuid() != 0:
            pytest.skip("making a file another user owns needs root")
        os.chown(config, 12345, 12345)
        why = "it belongs to another user"
    proc = zl(folder, "screen", "--ops", "add")
    assert proc.returncode == 2
    assert [ln for ln in proc.stderr.splitlines() if ln.strip()] == [
        (f"zl screen: {config} is not read: {why}, so it need not be yours; move it into your project, "
        "name it with --config PATH if you trust it, or ignore configuration files with --no-config")]
    assert not (folder / "runs").exists() and not (project / "runs").exists()
    named = zl(folder, "screen", "--plan", "--config", str(config), "--ops", "add")  # named: trusted
    assert named.returncode == 0, named.stderr


def test_the_interpreter_a_file_names_is_shown_before_it_runs(project):
    (project / "zl.yaml").write_text(IR_ONLY + f"python: {sys.executable}\n")
    proc = zl(project, "screen", "--plan", "--ops", "add")
    assert proc.returncode == 0, proc.stderr
    assert (f"zl screen: configuration {project / 'zl.yaml'}: backend, switch, python={sys.executable}, "
            "compile-only") in proc.stderr
