"""Sealed campaigns: a manifest frozen into a task matrix bound to it by SHA-256, then run
by ``zl screen --manifest``, which refuses to start, naming every broken precondition,
when anything differs from what was frozen. Through the CLI: the built-in suite compiled
for real (IR-only, no device), a fake FlagGems checkout under git, and a fake nvidia-smi
that answers in nvidia-smi's own CSV."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import fake_flaggems
import pytest
from sealed_manifests import BUILTIN_HEAD
from zl_core.cells import devicelock
from zl_core.cli import main

BUILTIN = BUILTIN_HEAD + """\
  - op: mm
    dtypes: [float16]
    reason: the tensor-core path the switch reaches
  - op: add
"""


def nvidia_smi(bin_dir: Path, name: str = "NVIDIA H200") -> None:
    """A GPU 0 named ``name``: the index query and the identity query, as nvidia-smi prints them."""
    tool = bin_dir / "nvidia-smi"
    tool.write_text(f"#!{sys.executable}\nimport sys\nargs = ' '.join(sys.argv[1:])\n"
                    "if 'name,uuid' in args:\n"
                    f"    print('{name}, GPU-8f6e0b7a-0000-0000-0000-000000000000, 580.65.06')\n"
                    "elif 'query-gpu=index' in args:\n    print('0')\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)


def zl(*argv: str) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return int(exc.code)


def problems(capsys) -> list[str]:
    return [line.strip() for line in capsys.readouterr().err.splitlines()[1:]]


def freeze(tmp_path: Path, text: str, capsys, name: str = "frozen") -> Path:
    manifest = tmp_path / f"{name}.yaml"
    manifest.write_text(text)
    out = tmp_path / name
    assert zl("freeze", manifest, "--out", out) == 0, capsys.readouterr().err
    capsys.readouterr()
    return out


@pytest.mark.slow
def test_a_builtin_manifest_is_frozen_then_screened(machine, tmp_path, capsys):
    frozen = freeze(tmp_path, BUILTIN, capsys)
    matrix = json.loads((frozen / "matrix.json").read_text())
    assert [t["op"] for t in matrix["tasks"]] == ["mm", "add"] and matrix["tasks"][0]["dtypes"] == ["float16"]
    assert all(len(t["files"]) >= 3 for t in matrix["tasks"]) and matrix["imports"]["triton"]
    assert not os.access(frozen / "matrix.json", os.W_OK) or os.geteuid() == 0  # written read-only
    assert zl("screen", "--manifest", frozen) == 0
    [campaign] = (tmp_path / "runs").glob("screen_*")
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["options"]["frozen"] == str(frozen.resolve()) and meta["compile_only"] is True
    assert meta["ops"] == ["mm:mm:float16", "add"]
    rows = {r["op"]: r["verdict"] for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    assert rows == {"mm": "IR_CHANGED", "add": "NO_IR_DIFF"}
    # The cells ran the build the matrix binds, and inherited what it binds (nothing here).
    from zl_core.foundation.compiler_build import build_id

    bound = build_id({m: b["digest"] for m, b in matrix["compiler"].items()})
    for cell in ("mm/A", "mm/B", "add/A", "add/B"):
        ident = json.loads((campaign / cell / "run_identity.json").read_text())
        assert ident["compiler_build"] == bound and ident["compiler_env"] == "none"
    # Receipts: every cell and the campaign, bound to the frozen matrix; the campaign sealed.
    from zl_core.seal import receipts

    receipt = json.loads((campaign / "receipt.json").read_text())
    seal_json = json.loads((frozen / "seal.json").read_text())
    assert receipt["frozen"]["matrix_sha256"] == seal_json["matrix_sha256"]
    assert receipt["rules"] is None and receipt["zl"]["files_sha256"] == matrix["zl"]["files_sha256"]
    assert sorted(receipt["cells"]) == ["add/A", "add/B", "mm/A", "mm/B"]
    cell = json.loads((campaign / "mm" / "B" / "receipt.json").read_text())
    assert "run_identity.json" in cell["files"] and any(f.endswith(".ttgir") for f in cell["files"])
    assert all(not (p.stat().st_mode & 0o222) for p in campaign.rglob("*") if p.is_file())
    assert receipts.check(campaign) == []
    ttgir = next((campaign / "mm" / "B").rglob("*.ttgir"))
    ttgir.chmod(0o644)
    ttgir.write_text(ttgir.read_text() + "// edited\n")
    assert receipts.check(campaign) == [f"mm/B: edited {ttgir.relative_to(campaign / 'mm' / 'B').as_posix()}"]
    # Reported, a sealed campaign is checked against its receipt: the edit is named.
    capsys.readouterr()
    assert zl("report", campaign) == 6
    assert [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()] == [
        (f"zl report: sealed campaign {campaign} changed since its receipt was written (mm/B: edited "
        f"{ttgir.relative_to(campaign / 'mm' / 'B').as_posix()}), so no verdict of it stands as sealed; "
        "report a copy from its archive, or pass --allow-incomplete to report its files as they are now")]
    assert zl("report", campaign, "--allow-incomplete") == 0
    # A frozen folder is never replaced.
    assert zl("freeze", tmp_path / "frozen.yaml", "--out", frozen) == 2
    assert "never overwritten" in capsys.readouterr().err


def test_a_dry_run_checks_and_estimates_but_writes_nothing(machine, tmp_path, capsys):
    (tmp_path / "m.yaml").write_text(BUILTIN)
    assert zl("freeze", tmp_path / "m.yaml", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "1. mm [mm] float16" in out and "estimated device time" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "m.yaml"]


def test_a_manifest_with_problems_names_every_one(machine, tmp_path, capsys):
    (tmp_path / "m.yaml").write_text(BUILTIN.replace("schema: 1", "schema: 7\ncolour: blue")
                                     .replace("    reason: the tensor-core path the switch reaches\n", "")
                                     + "rounds: 2\n")
    assert zl("freeze", tmp_path / "m.yaml", "--dry-run") == 2
    found = problems(capsys)
    assert any(p.startswith("colour: not a manifest key") for p in found)
    assert any(p.startswith("schema: must be 1") for p in found)
    assert any(p.startswith("workloads[0].reason: narrowing to dtypes") for p in found)
    assert any(p.startswith("rounds: a whole number from 4") for p in found)
    (tmp_path / "m.yaml").write_text(BUILTIN.replace("- op: add", "- op: nosuchop"))
    assert zl("freeze", tmp_path / "m.yaml", "--dry-run") == 2
    assert any("workloads[1] (nosuchop).op: no operator nosuchop" in p for p in problems(capsys))


@pytest.mark.parametrize("damage, named", [
    (lambda f: _edit(f / "manifest.yaml", lambda t: t.replace("- op: add", "- op: softmax")), "manifest:"),
    (lambda f: _edit(f / "matrix.json", lambda t: t.replace('"timeout_s": 1200.0', '"timeout_s": 9.0')), "matrix:"),
])
def test_an_edited_manifest_or_matrix_is_refused_by_name(machine, tmp_path, capsys, damage, named):
    frozen = freeze(tmp_path, BUILTIN, capsys)
    damage(frozen)
    assert zl("screen", "--manifest", frozen) == 3
    err = capsys.readouterr().err.splitlines()
    assert "precondition(s) broken" in err[0] and any(line.strip().startswith(named) for line in err[1:])
    assert not (tmp_path / "runs").exists()  # nothing ran


def _reseal(frozen: Path) -> None:
    """What a hand that edits matrix.json and then recomputes seal.json's digest does."""
    import hashlib

    seal = frozen / "seal.json"
    seal.chmod(0o644)
    data = json.loads(seal.read_text())
    data["matrix_sha256"] = hashlib.sha256((frozen / "matrix.json").read_bytes()).hexdigest()
    seal.write_text(json.dumps(data))


@pytest.mark.parametrize("edit, named", [
    (lambda t: t.replace('"timeout_s": 1200.0', '"timeout_s": 9.0'), "measure, tasks"),
    (lambda t: t.replace('"threshold_pct": 1.0', '"threshold_pct": 9.0'), "threshold_pct"),
    (lambda t: t.replace('"name": "DISABLE_MMA_V3"', '"name": "OTHER_SWITCH"'), "switch"),
])
def test_a_matrix_edited_with_its_seal_recomputed_is_refused(machine, tmp_path, capsys, edit, named):
    frozen = freeze(tmp_path, BUILTIN, capsys)
    _edit(frozen / "matrix.json", edit)
    _reseal(frozen)
    assert zl("screen", "--manifest", frozen) == 3
    err = capsys.readouterr().err.splitlines()
    assert f"  matrix: matrix.json says otherwise than manifest.yaml for {named}: it was edited after " \
           "freezing; freeze the manifest again" in err
    assert not (tmp_path / "runs").exists()


def test_a_changed_harness_is_refused(machine, tmp_path, capsys, monkeypatch):
    from zl_core.seal import digests

    frozen = freeze(tmp_path, BUILTIN, capsys)
    real = digests.zl_files
    monkeypatch.setattr(digests, "zl_files", lambda: {**real(), "zl_core/cells/cell.py": "0" * 64})
    assert zl("screen", "--manifest", frozen) == 3
    assert any(p.startswith("zl: 1 of zl's own files differ") and "edited zl_core/cells/cell.py" in p
               for p in problems(capsys))


def test_options_beside_a_manifest_are_refused(machine, tmp_path, capsys):
    frozen = freeze(tmp_path, BUILTIN, capsys)
    assert zl("screen", "--manifest", frozen, "--ops", "softmax", "--timeout", "5") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "drop --ops, --timeout (the matrix decides them)" in err[0]


@pytest.mark.parametrize("command, named", [
    ("screen", "--runs-root and --lock-timeout"),
    ("ab", "--runs-root, --telemetry-interval and --lock-timeout"),
])
def test_the_manifest_help_names_what_a_frozen_run_still_takes(command, named, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"decides every other option but {named}" in help_text.replace("--runs- root", "--runs-root")


def _edit(path: Path, change) -> None:
    path.chmod(0o644)
    path.write_text(change(path.read_text()))


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    root = fake_flaggems.build(tmp_path / "FlagGems")
    # The cells' interpreter imports torch: the checkout's stand-in for it.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root / "stubs"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "fake FlagGems")
    return root


def flaggems_manifest(root: Path) -> str:
    return textwrap.dedent(f"""\
        schema: 1
        campaign: fake-gemm
        claim: a fake FlagGems checkout under a frozen contract
        suite: flaggems
        sources:
          - {{name: main, path: {root}, commit: {_git(root, "rev-parse", "HEAD")}}}
        backend: cuda
        device: "0"
        device_name: NVIDIA H200
        switch: {{name: DISABLE_MMA_V3, a: "0", b: "1"}}
        workloads:
          - op: fakemm
            op_file: fake
          - op: fakeadd
        """)


@pytest.mark.slow
def test_every_broken_precondition_of_a_flaggems_campaign_is_named(machine, tmp_path, capsys, checkout):
    from zl_core.app import seal
    from zl_core.plugins.host import plugin_host

    frozen = freeze(tmp_path, flaggems_manifest(checkout), capsys)
    matrix = json.loads((frozen / "matrix.json").read_text())
    assert matrix["sources"][0]["commit"] == _git(checkout, "rev-parse", "HEAD")
    assert "benchmark/test_fake.py" in matrix["tasks"][0]["files"]
    # Its accuracy tests, found where FlagGems keeps them and bound with the rest.
    assert matrix["tasks"][0]["check"] == {"file": "tests/test_fake.py", "select": ["-m", "fakemm"]}
    # Collected by the cells' interpreter at freeze time: fakemm's three, fakeadd's one.
    assert [t["check_tests"] for t in matrix["tasks"]] == [3, 1]
    assert "tests/test_fake.py" in matrix["tasks"][0]["files"]
    assert matrix["imports"]["flag_gems"].startswith(str(checkout))
    nvidia_smi(machine)
    assert seal.check_frozen(plugin_host(), frozen)["campaign"] == "fake-gemm"  # all as frozen

    nvidia_smi(machine, "NVIDIA H100 80GB HBM3")  # another device
    bench = checkout / "benchmark" / "test_fake.py"
    bench.write_text(bench.read_text() + "\n# tuned\n")  # an edited benchmark file, uncommitted
    assert zl("screen", "--manifest", frozen) == 3
    found = problems(capsys)
    assert "device: cuda device 0 is NVIDIA H100 80GB HBM3, frozen for NVIDIA H200" in found
    assert any(p.startswith("benchmark fakemm: edited benchmark/test_fake.py") for p in found)
    assert any(p.startswith("source main: 1 tracked file(s) changed and not committed") for p in found)

    # Another commit, without fakemm: the source and the missing target are named.
    bench.write_text(bench.read_text().replace("def test_fakemm", "def test_fakemm_renamed"))
    _git(checkout, "commit", "-q", "-am", "rename")
    (machine / "nvidia-smi").unlink()  # and no device at all
    assert zl("screen", "--manifest", frozen) == 3
    found = problems(capsys)
    assert any(p.startswith("source main:") and "frozen at" in p for p in found)
    assert any(p.startswith("target fakemm: no longer in fake") for p in found)
    assert any(p.startswith("device: cuda device 0 is not here") for p in found), found

    # A checkout git cannot read: its changes cannot be listed, which is never read as clean.
    (checkout / ".git").rename(checkout / ".git-moved")
    (checkout / ".git").write_text("gitdir: /nonexistent/zl-gitdir\n")
    assert zl("screen", "--manifest", frozen) == 3
    found = problems(capsys)
    assert any(p.startswith(f"source main: git status in {checkout} failed (")
               and p.endswith("its uncommitted changes cannot be listed") for p in found), found


@pytest.mark.slow
def test_accuracy_tests_that_select_nothing_or_cannot_be_collected_are_refused_at_freeze(
        tmp_path, capsys, checkout):
    # A selection that keeps no test would make every workload unclassable (X) after its
    # rounds had spent the device time; pytest -k matches test ids, not parameter values.
    text = flaggems_manifest(checkout).replace(
        "    op_file: fake\n",
        "    op_file: fake\n    correctness: {select: [-m, fakemm, -k, float16 and not x], reason: the timed dtype}\n")
    manifest = tmp_path / "nothing.yaml"
    manifest.write_text(text)
    assert zl("freeze", manifest, "--dry-run") == 2
    err = capsys.readouterr().err
    # Quoted as a shell would need it: one argument, spaces and all.
    assert ("workloads[0] (fakemm).correctness: tests/test_fake.py -m fakemm -k 'float16 and not x' selects no test; "
            "fix the selection") in err
    assert "fakeadd" not in err  # its default selection collects one test
    # Collected side by side, named in workload order.
    manifest.write_text(text.replace("  - op: fakeadd\n", "  - op: fakeadd\n    correctness: "
                                     "{select: [-m, fakeadd, -k, nothing], reason: none}\n"))
    assert zl("freeze", manifest, "--dry-run") == 2
    named = [p.split(".correctness")[0] for p in problems(capsys) if "selects no test" in p]
    assert named == ["workloads[0] (fakemm)", "workloads[1] (fakeadd)"]

    broken = checkout / "tests" / "test_fake.py"
    broken.write_text(broken.read_text() + "\nimport no_such_module_zl\n")
    _git(checkout, "commit", "-q", "-am", "a test file that cannot import")
    text = flaggems_manifest(checkout)
    manifest.write_text(text)
    assert zl("freeze", manifest, "--dry-run") == 2
    err = capsys.readouterr().err
    assert "workloads[0] (fakemm).correctness: tests/test_fake.py -m fakemm: its tests cannot be collected (pytest exit 2" in err
    assert "no_such_module_zl" in err, err



@pytest.mark.slow
def test_freeze_imports_what_a_cell_imports(machine, tmp_path, capsys, checkout, monkeypatch):
    """Looking modules up passes an interpreter without torch (it finds FlagGems all the
    same); importing them, in a cell's order, does not."""
    with_torch = os.environ["PYTHONPATH"]
    frozen = freeze(tmp_path, flaggems_manifest(checkout), capsys)
    imports = json.loads((frozen / "matrix.json").read_text())["imports"]
    assert imports["torch"] == str(checkout / "stubs" / "torch" / "__init__.py")  # bound like the rest
    assert list(imports) == ["torch", "triton", "flag_gems"]  # zl's plugins: named only if broken

    monkeypatch.setenv("PYTHONPATH", with_torch.replace(str(checkout / "stubs"), str(tmp_path / "none")))
    manifest = tmp_path / "frozen.yaml"
    assert zl("freeze", manifest, "--dry-run") == 2
    found = problems(capsys)
    assert found == [(f"import torch: {sys.executable} cannot import it; freeze with the interpreter "
                     "the cells run (--python)")], found
    nvidia_smi(machine)
    assert zl("screen", "--manifest", frozen) == 3  # and a frozen run whose torch is gone
    assert any(p.startswith(f"import torch: {sys.executable} imports it from nowhere, frozen from")
               for p in problems(capsys))

    # A package that is there but cannot load (a vendor library missing).
    monkeypatch.setenv("PYTHONPATH", with_torch)
    package = checkout / "src" / "flag_gems" / "__init__.py"
    package.write_text('raise ImportError("libcudart.so.12: cannot open shared object file")\n'
                       + package.read_text())
    _git(checkout, "commit", "-q", "-am", "a package that cannot load")
    manifest.write_text(flaggems_manifest(checkout))
    assert zl("freeze", manifest, "--dry-run") == 2
    assert any(p.startswith(f"import flag_gems: {sys.executable} cannot import it")
               for p in problems(capsys))


def _collecting_in(root: Path) -> list[int]:
    """Processes running ``pytest --collect-only`` in ``root`` (their cwd)."""
    out = []
    for line in os.popen("ps -eo pid,args").read().splitlines()[1:]:
        pid, _, args = line.strip().partition(" ")
        try:
            if "pytest --collect-only" in args and os.readlink(f"/proc/{pid}/cwd") == str(root):
                out.append(int(pid))
        except OSError:
            pass  # ended meanwhile
    return out


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_freeze_ends_the_collections_it_started(tmp_path, checkout, sig, code):
    # Collections run on worker threads; an interrupt reaches the main thread only, so
    # each collection is a registered helper the signal handler kills, not one that keeps
    # zl waiting until its import finishes (here: never).
    (checkout / "tests" / "conftest.py").write_text("import time\ntime.sleep(3600)\n")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "tests whose collection never ends")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(flaggems_manifest(checkout))
    proc = subprocess.Popen([sys.executable, "-m", "zl_core", "freeze", str(manifest), "--out",
                             str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    for _ in range(600):
        if _collecting_in(checkout):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("no collection started")
    try:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)  # a hang here is the failure
        assert proc.returncode == code and f"interrupted by {sig.name}" in err
        assert _collecting_in(checkout) == []
    finally:  # a failure leaves no hour-long sleeper behind
        proc.kill()
        for pid in _collecting_in(checkout):
            os.kill(pid, signal.SIGKILL)
    assert not (tmp_path / "out").exists()


def test_a_busy_device_is_refused(machine, tmp_path, capsys, checkout):
    frozen = freeze(tmp_path, flaggems_manifest(checkout), capsys)
    nvidia_smi(machine)
    lock = devicelock.DeviceLock("cuda", "0")
    assert lock.try_acquire()
    try:
        assert zl("screen", "--manifest", frozen) == 3
    finally:
        lock.release()
    assert any(p.startswith("device: cuda device 0 is busy") for p in problems(capsys))


def test_ab_takes_rounds_threshold_and_the_frozen_ops_from_the_matrix(machine, tmp_path, capsys):
    from zl_core.app import AbOptions, seal

    frozen = freeze(tmp_path, BUILTIN.replace("  - op: add", "  - op: add\n    timeout_s: 90")
                    + "rounds: auto\nmax_rounds: 16\nthreshold_pct: 2\n", capsys)
    options = seal.frozen_options("ab", frozen, AbOptions(runs_root=tmp_path / "r"))
    assert options.ops == ("mm:mm:float16", "add") and options.rounds is None
    assert options.max_rounds == 16 and options.threshold_pct == 2.0
    assert options.switch.switch == "DISABLE_MMA_V3" and options.switch.b_value == "1"
    assert options.measure.compile_only and options.measure.target == "cuda:90"
    assert options.frozen == frozen.resolve() and options.runs_root == tmp_path / "r"
    # Each workload's own timeout reaches its cells; the others have the manifest's.
    from zl_core.app.resolve import cell_settings
    from zl_core.interface.opspec import OpSpec

    settings = cell_settings(options.measure, None)
    assert options.measure.op_timeouts == (("add", 90.0),) and options.measure.timeout_s == 1200.0
    assert settings.timeout_of(OpSpec.parse("add")) == 90.0
    assert settings.timeout_of(OpSpec.parse("mm:mm:float16")) == 1200.0


def test_what_a_cell_times_is_frozen_or_left_to_the_command(machine, tmp_path, capsys):
    from zl_core.app import AbOptions, ScreenOptions, seal

    given = freeze(tmp_path, BUILTIN + "timing: operator\n", capsys, name="given")
    assert json.loads((given / "matrix.json").read_text())["measure"]["timing"] == "operator"
    options = seal.frozen_options("ab", given, AbOptions(runs_root=tmp_path / "r"))
    assert options.measure.timing == "operator"  # the A/B default would time the reference too
    unset = freeze(tmp_path, BUILTIN, capsys, name="unset")
    assert "timing" not in json.loads((unset / "matrix.json").read_text())["measure"]
    assert seal.frozen_options("ab", unset, AbOptions()).measure.timing == "full"
    assert seal.frozen_options("screen", unset, ScreenOptions()).measure.timing == "operator"
    bad = tmp_path / "bad.yaml"
    bad.write_text(BUILTIN + "timing: reference\n")
    assert zl("freeze", bad, "--out", tmp_path / "bad") == 2
    assert "timing: one of full, operator, once, got 'reference'" in problems(capsys)


def test_a_campaign_not_frozen_gets_receipts_but_stays_writable(machine, tmp_path, capsys):
    from zl_core.seal import receipts

    assert zl("screen", "--suite", "builtin", "--switch", "DISABLE_MMA_V3", "--ops", "add") == 0
    [campaign] = (tmp_path / "runs").glob("screen_*")
    receipt = json.loads((campaign / "receipt.json").read_text())
    assert receipt["frozen"] is None and sorted(receipt["cells"]) == ["add/A", "add/B"]
    assert "campaign.json" in receipt["tables"] and "screen.json" in receipt["tables"]
    assert os.access(campaign / "campaign.json", os.W_OK)
    assert receipts.check(campaign) == []


@pytest.mark.slow
def test_a_configuration_file_never_changes_a_frozen_run(machine, tmp_path, capsys, monkeypatch):
    frozen = freeze(tmp_path, BUILTIN, capsys)
    (tmp_path / "zl.yaml").write_text("screen:\n  timeout: 5\n  ops: [softmax]\n")
    monkeypatch.chdir(tmp_path)
    assert zl("screen", "--manifest", frozen, "--config", "zl.yaml") == 2
    assert "--manifest runs a frozen matrix as it was frozen; drop --config" in capsys.readouterr().err
    assert zl("screen", "--manifest", frozen) == 0
    assert f"{tmp_path / 'zl.yaml'} is not read: --manifest runs a frozen matrix" in capsys.readouterr().err
    [campaign] = (tmp_path / "runs").glob("screen_*")
    assert json.loads((campaign / "campaign.json").read_text())["ops"] == ["mm:mm:float16", "add"]


def test_a_cell_receipt_names_the_source_package_under_either_identity_name(tmp_path):
    """The identity field once written ``gems_package`` (zl-flaggems' cells) and its
    neutral name ``source_package`` both come out as the receipt's ``source_package``."""
    from zl_core.seal.receipts import cell_receipt

    for key in ("gems_package", "source_package"):
        (tmp_path / "run_identity.json").write_text(json.dumps({"provider": "p", key: "pkg"}))
        assert cell_receipt(tmp_path)["identity"] == {"provider": "p", "source_package": "pkg"}


def test_a_manifest_that_asks_for_side_r_runs_ab_retuned(machine, tmp_path, capsys):
    from zl_core.app import AbOptions, seal

    asked = freeze(tmp_path, "retuned: true\n" + BUILTIN, capsys, name="asked")
    assert seal.frozen_options("ab", asked, AbOptions(runs_root=tmp_path / "r")).retuned is True
    plain = freeze(tmp_path, BUILTIN, capsys, name="plain")
    assert seal.frozen_options("ab", plain, AbOptions(runs_root=tmp_path / "r")).retuned is False
    assert "retuned" not in json.loads((plain / "matrix.json").read_text())
