"""What decides the generated code is bound: the compiler build the cells import (a digest
of its files, the shared library included) and the compiler's variables each cell got.

Through the CLI: the motivating case on the real triton 3.6.0 (compile-only, no device):
``TRITON_F32_DEFAULT=ieee`` exported in the shell turns DISABLE_MMA_V3's IR_CHANGED on
the float32 GEMM into NO_IR_DIFF; the cells record it, the report's header shows it and
``zl report --ab`` refuses to compare across it. The switch and its family exported in
the shell never reach a cell. A small fake compiler package on PYTHONPATH (the real
install is never edited) stands for a rebuilt compiler: a frozen run refuses it, and
``zl report --ab`` refuses two campaigns of two builds.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from sealed_manifests import BUILTIN_HEAD
from zl_core.cli import main
from zl_core.foundation import compiler_build
from zl_core.foundation.compiler_env import CellVars, CompilerEnv, scrub
from zl_core.interface.caliber import compare, read_identity

triton = pytest.importorskip("triton")

BUILTIN = BUILTIN_HEAD + """\
  - op: add
"""


def zl(*argv: object) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return int(exc.code)


def screened(tmp_path: Path, *argv: str) -> Path:
    """Run ``zl screen`` with ``argv`` and return its new campaign folder."""
    before = set((tmp_path / "runs").glob("screen_*"))
    assert zl("screen", *argv) == 0
    [campaign] = set((tmp_path / "runs").glob("screen_*")) - before
    return campaign


def verdicts(campaign: Path) -> dict[str, str]:
    return {r["op"]: r["verdict"] for r in json.loads((campaign / "screen.json").read_text())["ops"]}


def fake_compiler(site: Path, *, version: str = "3.6.0+git0123abc") -> Path:
    """A compiler package named triton: sources, a 'shared library', a distribution record."""
    package = site / "triton"
    (package / "compiler").mkdir(parents=True)
    (package / "_C").mkdir()
    (package / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (package / "compiler" / "__init__.py").write_text("")
    (package / "compiler" / "compiler.py").write_text("def compile(src):\n    return src\n")
    (package / "_C" / "libtriton.so").write_bytes(bytes(range(256)) * 64)
    info = site / f"triton-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: triton\nVersion: {version}\n\n")
    (info / "top_level.txt").write_text("triton\n")
    return package


# -- the compiler's variables -----------------------------------------------------------


@pytest.mark.slow
def test_an_inherited_compiler_variable_is_recorded_shown_and_refused(machine, tmp_path, monkeypatch,
                                                                      capsys):
    screen = ("--suite", "builtin", "--compile-only", "--target", "cuda:90", "--switch",
              "DISABLE_MMA_V3", "--ops", "mm_f32")
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    ieee = screened(tmp_path, *screen)
    assert "zl screen: the cells inherit TRITON_F32_DEFAULT=ieee from this environment" in capsys.readouterr().err
    monkeypatch.delenv("TRITON_F32_DEFAULT")
    unset = screened(tmp_path, *screen)
    # The issue's case: the same command, two verdicts, decided by the shell.
    assert verdicts(ieee) == {"mm_f32": "NO_IR_DIFF"} and verdicts(unset) == {"mm_f32": "IR_CHANGED"}
    for side, value in (("A", "0"), ("B", "1")):
        ident = read_identity(ieee / "mm_f32" / side)
        assert ident["env"] == {"DISABLE_MMA_V3": value}  # the side's switch, as before
        assert ident["compiler_env"] == "TRITON_F32_DEFAULT=ieee"
        assert ident["compiler_vars"]["inherited"] == {"TRITON_F32_DEFAULT": "ieee"}
        assert ident["compiler_vars"]["effective"]["DISABLE_MMA_V3"] == value
        assert read_identity(unset / "mm_f32" / side)["compiler_env"] == "none"
    capsys.readouterr()
    assert zl("report", ieee) == 0  # one campaign, one condition: reported, with it in the header
    assert "compiler_env=TRITON_F32_DEFAULT=ieee" in capsys.readouterr().out
    assert zl("report", "--ab", ieee / "mm_f32" / "A", unset / "mm_f32" / "B") == 4
    err = capsys.readouterr().err
    assert "caliber field 'compiler_env' differs: A=TRITON_F32_DEFAULT=ieee B=none" in err
    assert zl("report", "--ab", unset / "mm_f32" / "A", unset / "mm_f32" / "B") == 0


@pytest.mark.slow
def test_the_switch_and_its_family_are_never_inherited(machine, tmp_path, monkeypatch, capsys):
    # Only side B names the switch: side A would inherit the shell's DISABLE_MMA_V3=1 and
    # compile what B compiles. DISABLE_MMA_V5 is of its family (Triton's MMA generation).
    monkeypatch.setenv("DISABLE_MMA_V3", "1")
    monkeypatch.setenv("DISABLE_MMA_V5", "1")
    campaign = screened(tmp_path, "--suite", "builtin", "--compile-only", "--target", "cuda:90",
                        "--b-env", "DISABLE_MMA_V3=1", "--ops", "mm:mm:float16")
    assert verdicts(campaign) == {"mm": "IR_CHANGED"}
    assert ("not passed on to the cells (the switch and its family come from each side alone): "
            "DISABLE_MMA_V3=1 DISABLE_MMA_V5=1") in capsys.readouterr().err
    a, b = (read_identity(campaign / "mm" / side) for side in "AB")
    assert "DISABLE_MMA_V3" not in a["compiler_vars"]["effective"]
    assert b["compiler_vars"]["effective"]["DISABLE_MMA_V3"] == "1"
    for ident in (a, b):
        assert ident["compiler_vars"]["scrubbed"] == {"DISABLE_MMA_V3": "1", "DISABLE_MMA_V5": "1"}
        assert "DISABLE_MMA_V5" not in ident["compiler_vars"]["effective"]
        assert ident["compiler_env"] == "none"


def test_a_backend_declares_its_switch_family(machine, tmp_path, monkeypatch):
    # The CUDA backend's default switch is FlagTree's RLC switch: its phase mask and
    # DISABLE_LLVM_OPT go with it (stock Triton reads neither switch: --force-switch).
    monkeypatch.setenv("FLAGTREE_RLC_PHASE_MASK", "5")
    monkeypatch.setenv("DISABLE_LLVM_OPT", "1")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    campaign = screened(tmp_path, "--suite", "builtin", "--compile-only", "--target", "cuda:90",
                        "--switch", "FLAGTREE_RLC_ENHANCE", "--force-switch", "--ops", "add")
    ident = read_identity(campaign / "add" / "A")
    assert ident["compiler_vars"]["scrubbed"] == {"DISABLE_LLVM_OPT": "1", "FLAGTREE_RLC_PHASE_MASK": "5"}
    assert ident["compiler_env"] == "TRITON_DEFAULT_FP_FUSION=0"  # not of the family: recorded


# -- the compiler build ---------------------------------------------------------------------


def test_every_cell_names_the_compiler_build_it_imports(machine, tmp_path):
    campaign = screened(tmp_path, "--suite", "builtin", "--compile-only", "--target", "cuda:90",
                        "--switch", "DISABLE_MMA_V3", "--ops", "add")
    a, b = (read_identity(campaign / "add" / side) for side in "AB")
    root = Path(triton.__file__).parent
    assert a["compiler"]["triton"]["path"] == str(root) == b["compiler"]["triton"]["path"]
    assert a["compiler"]["triton"]["version"] == triton.__version__
    assert a["compiler_build"] == b["compiler_build"] != "none"
    # What the digest is over: every file of the package, the shared library included.
    files = compiler_build.tree_digests(root)
    assert "_C/libtriton.so" in files and not any(f.endswith(".pyc") for f in files)
    assert a["compiler"]["triton"]["digest"] == compiler_build.combined(files)
    assert a["compiler"]["triton"]["files"] == len(files)


def test_a_frozen_run_refuses_another_compiler_build(machine, tmp_path, monkeypatch, capsys):
    from zl_core.app import seal
    from zl_core.plugins.host import plugin_host

    package = fake_compiler(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    (tmp_path / "m.yaml").write_text(BUILTIN)
    assert zl("freeze", tmp_path / "m.yaml", "--out", tmp_path / "frozen") == 0
    out = capsys.readouterr().out
    assert f"triton 3.6.0+git0123abc: {package}, 4 files, commit 0123abc" in out
    matrix = json.loads((tmp_path / "frozen" / "matrix.json").read_text())
    bound = matrix["compiler"]["triton"]
    frozen_id = compiler_build.build_id({"triton": bound["digest"]})
    assert f"compiler build {frozen_id} (the cells' compiler_build)" in out
    assert bound["path"] == str(package) and bound["commit"] == "0123abc"
    assert sorted(bound["files"]) == ["_C/libtriton.so", "__init__.py", "compiler/__init__.py",
                                      "compiler/compiler.py"]
    assert matrix["compiler_env"] == {}
    assert seal.check_frozen(plugin_host(), tmp_path / "frozen")["campaign"] == "builtin-ir-only"

    with open(package / "compiler" / "compiler.py", "a") as handle:  # edited in place
        handle.write("# tuned\n")
    assert zl("screen", "--manifest", tmp_path / "frozen") == 3
    err = capsys.readouterr().err
    assert f"compiler triton: {package} is another build than the one frozen (build " in err
    assert f"commit 0123abc, frozen {frozen_id}, commit 0123abc; 1 file(s): edited compiler/compiler.py" in err
    assert not (tmp_path / "runs").exists()  # nothing ran

    # The shared library rebuilt to the same size, its modification time put back: a frozen
    # run reads every byte, so it is still another build.
    (package / "compiler" / "compiler.py").write_text("def compile(src):\n    return src\n")
    library = package / "_C" / "libtriton.so"
    stat = library.stat()
    library.write_bytes(bytes(reversed(range(256))) * 64)
    os.utime(library, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert zl("screen", "--manifest", tmp_path / "frozen") == 3
    err = capsys.readouterr().err
    assert "edited _C/libtriton.so" in err and "edited compiler/compiler.py" not in err


def test_a_frozen_run_refuses_other_compiler_variables(machine, tmp_path, monkeypatch, capsys):
    (tmp_path / "m.yaml").write_text(BUILTIN)
    assert zl("freeze", tmp_path / "m.yaml", "--out", tmp_path / "frozen") == 0
    monkeypatch.setenv("DISABLE_MMA_V3", "1")  # the switch: never inherited, so not a problem
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    capsys.readouterr()
    assert zl("screen", "--manifest", tmp_path / "frozen") == 3
    problems = [line.strip() for line in capsys.readouterr().err.splitlines()[1:]]
    assert problems == [("compiler env: this environment passes the cells TRITON_F32_DEFAULT=ieee, "
                         "frozen with none; set or unset them as frozen")]


def test_report_ab_refuses_two_campaigns_of_two_compiler_builds(fake_host, tmp_path, monkeypatch, capsys):
    package = fake_compiler(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))  # the fake cells' interpreter finds it
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "runs"))
    screen = ("--suite", "fake", "--ops", "gemm")
    first, second = screened(tmp_path, *screen), screened(tmp_path, *screen)
    (package / "_C" / "libtriton.so").write_bytes(b"rebuilt" * 2048)  # a rebuild, same version
    rebuilt = screened(tmp_path, *screen)
    builds = [read_identity(c / "gemm" / "A")["compiler_build"] for c in (first, second, rebuilt)]
    assert builds[0] == builds[1] != builds[2]
    assert read_identity(first / "gemm" / "A")["compiler"]["triton"]["path"] == str(package)
    capsys.readouterr()
    assert zl("report", "--ab", first / "gemm" / "A", second / "gemm" / "B") == 0
    assert zl("report", "--ab", first / "gemm" / "A", rebuilt / "gemm" / "B") == 4
    assert (f"caliber field 'compiler_build' differs: A={builds[0]} B={builds[2]}"
            in capsys.readouterr().err)


# -- the pieces -----------------------------------------------------------------------------


def test_a_cached_digest_is_reused_until_the_file_changes(tmp_path, monkeypatch):
    package = fake_compiler(tmp_path / "site")
    first = compiler_build.tree_digests(package)
    read = []
    real = compiler_build.file_sha256
    monkeypatch.setattr(compiler_build, "file_sha256", lambda path: read.append(path) or real(path))
    compiler_build._memo.clear()  # as a new process: the cache file alone
    assert compiler_build.tree_digests(package) == first and read == []
    library = package / "_C" / "libtriton.so"
    stat = library.stat()
    library.write_bytes(bytes(reversed(range(256))) * 64)  # same size, time put back
    os.utime(library, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = compiler_build.tree_digests(package)
    assert read == [library] and again["_C/libtriton.so"] != first["_C/libtriton.so"]


def test_the_commit_a_build_records(tmp_path):
    vcs = fake_compiler(tmp_path / "vcs", version="3.6.0")
    info = tmp_path / "vcs" / "triton-3.6.0.dist-info"
    (info / "direct_url.json").write_text(json.dumps(
        {"url": "https://github.com/triton-lang/triton", "vcs_info": {"vcs": "git", "commit_id": "c0ffee" * 6 + "ab"}}))
    assert compiler_build.build_of("triton", vcs / "__init__.py").commit == "c0ffee" * 6 + "ab"
    dev = fake_compiler(tmp_path / "dev", version="3.2.0+git4b3bb1f8")
    assert compiler_build.build_of("triton", dev / "__init__.py").commit == "4b3bb1f8"
    plain = fake_compiler(tmp_path / "plain", version="3.6.0")
    assert compiler_build.build_of("triton", plain / "__init__.py").commit is None


def test_old_identities_compare_equal_to_each_other_and_to_no_recorded_build():
    old = {"backend": "cuda", "autotune_mode": "record"}
    new = {**old, "autotune_mode": "replay", "compiler_build": "0123456789abcdef", "compiler_env": "none"}
    assert compare({"A": old, "B": {**old, "autotune_mode": "replay"}}).ok
    problems = compare({"A": old, "B": new}).problems
    assert "caliber field 'compiler_build' differs: A=unrecorded B=0123456789abcdef" in problems
    assert "caliber field 'compiler_env' differs: A=unrecorded B=none" in problems


def test_scrubbing_and_what_a_cell_inherited():
    spec = CompilerEnv(reads=("TRITON_*", "FLAGTREE_*", "DISABLE_*"), ignores=("TRITON_HOME",),
                       families=(("FLAGTREE_*RLC*", "DISABLE_LLVM_OPT"), ("DISABLE_MMA_V*",)))
    caller = {"FLAGTREE_RLC_ENHANCE": "1", "FLAGTREE_MUSA_RLC_PHASE_MASK": "3", "DISABLE_LLVM_OPT": "1",
              "DISABLE_MMA_V5": "1", "TRITON_F32_DEFAULT": "ieee", "TRITON_HOME": "/h", "HOME": "/u"}
    kept, scrubbed = scrub(caller, ["FLAGTREE_RLC_ENHANCE"], spec)
    assert sorted(scrubbed) == ["DISABLE_LLVM_OPT", "FLAGTREE_MUSA_RLC_PHASE_MASK", "FLAGTREE_RLC_ENHANCE"]
    assert sorted(kept) == ["DISABLE_MMA_V5", "HOME", "TRITON_F32_DEFAULT", "TRITON_HOME"]
    env = {**kept, "FLAGTREE_RLC_ENHANCE": "0", "TRITON_CACHE_DIR": "/cell/.triton_cache"}
    cell = CellVars.of(env, inherited_from=kept, written={"FLAGTREE_RLC_ENHANCE", "TRITON_CACHE_DIR"},
                       scrubbed=scrubbed, spec=spec)
    assert cell.inherited == {"DISABLE_MMA_V5": "1", "TRITON_F32_DEFAULT": "ieee"}
    assert cell.effective["FLAGTREE_RLC_ENHANCE"] == "0" and "TRITON_HOME" not in cell.effective
    assert cell.caliber == "DISABLE_MMA_V5=1 TRITON_F32_DEFAULT=ieee"
    assert CellVars.of({}, inherited_from={}, written=(), scrubbed={}, spec=spec).caliber == "none"


def test_the_providers_record_every_switch_the_switch_check_knows():
    from zl_flaggems.host.compiler_vars import COMPILER_ENV
    from zl_flaggems.host.switch_probe import CANDIDATES

    assert [name for name in CANDIDATES if not COMPILER_ENV.read(name)] == []
    knobs = {d.key for group in vars(triton.knobs).values() if isinstance(group, triton.knobs.base_knobs)
             for d in group.knob_descriptors.values()}
    # Every knob of triton 3.6.0 but the C compiler of its host-side launcher stub.
    assert sorted(k for k in knobs if not COMPILER_ENV.read(k)) == ["CC"]
    assert not COMPILER_ENV.read("FLAGGEMS_DIR") and not COMPILER_ENV.read("PATH")


def test_the_interpreter_is_asked_once_where_it_imports_the_compiler(tmp_path, monkeypatch):
    fake_compiler(tmp_path / "site")
    asked = []
    real = compiler_build.origins
    monkeypatch.setattr(compiler_build, "origins", lambda *a, **k: asked.append(a) or real(*a, **k))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    for cell in ("a", "b"):
        (tmp_path / cell).mkdir()
        builds = compiler_build.cell_builds(sys.executable, ("triton", "no_such_compiler_zl"), env,
                                            tmp_path / cell)
        assert list(builds) == ["triton"] and builds["triton"].path == str(tmp_path / "site" / "triton")
    assert len(asked) == 1
    # A working folder that holds a module of that name is where the interpreter finds it.
    fake_compiler(tmp_path / "c")
    assert compiler_build.cell_builds(sys.executable, ("triton",), env, tmp_path / "c")["triton"].path == \
        str(tmp_path / "c" / "triton")
    assert compiler_build.caliber_value({}) == "none"


def test_a_control_sides_variables_are_inherited_by_no_cell_of_the_campaign(tmp_path):
    from zl_core import Backend
    from zl_core.campaigns.ab_task import AbTask, RoundsPlan
    from zl_core.campaigns.checks import control_request
    from zl_core.campaigns.executor import Lane
    from zl_core.campaigns.settings import CellSettings
    from zl_core.foundation.switches import Sides
    from zl_core.interface.opspec import OpSpec
    from zl_core.store.layout import CampaignLayout

    settings = CellSettings(python=sys.executable, source=None, shape_file=None, shapes="file",
                            level="core", timer="graph", direct_repeat=1, isolate_tuner_cache=True,
                            timeout_s=60, compile_only=False, target=None)
    task = AbTask(op=OpSpec.parse("gemm"), control=False, exempt_no_ir_diff=False,
                  layout=CampaignLayout(tmp_path), suite="fake", backend=Backend(name="fakegpu"),
                  sides=Sides(switch="FAKE_SWITCH", a_value="0", b_value="1", a_env={"FAKE_SWITCH": "0"},
                              b_env={"FAKE_SWITCH": "1"}),
                  settings=settings, plan=RoundsPlan(rounds=4, max_rounds=8, allow_no_ir_diff=False,
                                                     threshold_pct=1.0),
                  control_env=(("FAKE_PHASES", "0"),))
    for request in (task.request(Lane(), "A", 1), task.request(Lane(), "B", 2), control_request(task, Lane())):
        assert request.switch_vars == ("FAKE_PHASES", "FAKE_SWITCH")
    assert "FAKE_PHASES" not in task.request(Lane(), "A", 1).env
