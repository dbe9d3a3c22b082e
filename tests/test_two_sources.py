"""A campaign over two checkouts: FlagGems (``flag_gems``) and FlagGems-vllm
(``flaggems_vllm``), with the real FlagGems provider and real pytest cells on the fake
checkouts of tests/fake_flaggems.py (no torch, a fake Triton driver)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import fake_flaggems
import pytest
from fake_flaggems import FakeGpuHost
from zl_core import PluginHost, app
from zl_core.foundation.errors import BadInputError, UsageError
from zl_core.store.layout import CampaignLayout
from zl_core.store.record import read_campaign


def vllm_checkout(root: Path) -> Path:
    """The fake checkout rebuilt the way FlagGems-vllm is laid out: package flaggems_vllm,
    benchmarks importing it; and a benchmark function two of its files define."""
    fake_flaggems.build(root)
    shutil.move(root / "src" / "flag_gems", root / "src" / "flaggems_vllm")
    for path in [*root.rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("flag_gems", "flaggems_vllm"), encoding="utf-8")
    shutil.copy(root / "benchmark" / "test_fake.py", root / "benchmark" / "test_fake2.py")
    return root


@pytest.fixture
def two(tmp_path, monkeypatch):
    monkeypatch.setenv("ZL_DISABLE_PLUGINS", "cuda,musa,rocm,ascend")
    for key in ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "FLAGGEMS_DIR"):
        monkeypatch.delenv(key, raising=False)
    main = fake_flaggems.build(tmp_path / "FlagGems")
    vllm = vllm_checkout(tmp_path / "FlagGems-vllm")
    # The fake checkout's torch stub: the cells' interpreter finds torch, triton and the package.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(main / "stubs"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    host = PluginHost()
    host.register(FakeGpuHost(), name="fakegpu", package="tests", version="0")
    return host, main, vllm, tmp_path


def options(main: Path, vllm: Path, runs: Path, ops: tuple[str, ...], vllm_item: str | None = None):
    where = app.Where(source=str(main), more_sources=(vllm_item or str(vllm),), backend="fakegpu")
    return app.ScreenOptions(ops=ops, where=where, runs_root=runs,
                             switch=app.SwitchChoice(switch="FAKE_SWITCH", a_value="0",
                                                     b_value="1", force=True))


@pytest.mark.slow
def test_a_screen_over_both_checkouts(two):
    host, main, vllm, tmp = two
    done = app.screen(host, options(main, vllm, tmp / "runs",
                                    ("fakeadd:fake", "vllm:fakeadd@fake", "vllm:fakemm@fake2")))
    verdicts = {r["op"]: r["verdict"] for r in done.rows}
    assert set(verdicts) == {"fakeadd", "vllm:fakeadd@fake", "vllm:fakemm@fake2"}
    assert not done.failed
    layout = CampaignLayout(done.campaign)
    # Each cell ran in its own checkout, on the package it holds; the identity says so.
    for op, root, package, node in (
            ("fakeadd", main, "flag_gems", "benchmark/test_fake.py::test_fakeadd"),
            ("vllm:fakeadd@fake", vllm, "flaggems_vllm", "benchmark/test_fake.py::test_fakeadd"),
            ("vllm:fakemm@fake2", vllm, "flaggems_vllm", "benchmark/test_fake2.py::test_fakemm")):
        ident = json.loads((layout.cell_dir(op, "A") / "run_identity.json").read_text())
        assert ident["source"] == str(root.resolve()) and ident["gems_package"] == package
        assert ident["test_node"] == node and ident["op"] == op
        assert ident["gems_package_imported"] == package
        assert ident["flaggems_vendor"] == "fakevendor"
    assert (done.campaign / "vllm+fakeadd@fake" / "A").is_dir()
    meta = read_campaign(done.campaign).to_json()
    assert meta["sources"] == [{"name": "main", "path": str(main.resolve())},
                               {"name": "vllm", "path": str(vllm.resolve())}]
    # The report lists them by name.
    model = app.campaign_report(done.campaign)
    assert {r["op"] for r in model["rows"]} == set(verdicts)


def test_a_function_two_files_share_needs_its_file(two):
    host, main, vllm, tmp = two
    with pytest.raises(BadInputError, match=r"vllm:fakeadd@fake, vllm:fakeadd@fake2"):
        app.screen(host, options(main, vllm, tmp / "runs", ("vllm:fakeadd",)))
    assert not (tmp / "runs").exists() or not list((tmp / "runs").iterdir())


def test_an_unnamed_source_that_is_neither_package_must_be_named(two):
    host, main, _, tmp = two
    other = fake_flaggems.build(tmp / "Other")  # a second flag_gems checkout: no name of its own
    with pytest.raises(UsageError, match=r"both called 'main'|give it a name"):
        app.screen(host, options(main, other, tmp / "runs", ("fakeadd:fake",)))
    done = app.screen(host, options(main, other, tmp / "runs", ("fork:fakeadd:fake",),
                                    vllm_item=f"fork={other}"))
    assert [r["op"] for r in done.rows] == ["fork:fakeadd"]


def test_zl_ops_lists_each_source(two):
    _, main, vllm, _ = two
    proc = subprocess.run([sys.executable, "-m", "zl_core", "ops", "--flaggems-dir", str(main),
                           "--flaggems-dir", str(vllm)], capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "suite flaggems: source main 9 operator(s)" in out
    assert "suite flaggems: source vllm 17 operator(s)" in out
    rows = [line.split()[:2] for line in out.splitlines()]
    # The default source's operators keep their names; a function two files of the
    # second source define is listed once per file; one only one file defines is plain.
    assert ["fakeadd", "fake"] in rows and ["vllm:faketuned", "fake_tuned"] in rows
    assert ["vllm:fakeadd@fake", "fake"] in rows and ["vllm:fakeadd@fake2", "fake2"] in rows


def _zl(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zl_core", *argv], capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("item", "code", "says"), [
    ("=DIR", 2, "the name before '=' is empty"),
    ("vllm=", 2, "no directory after '='; give vllm=DIR"),
    ("a b=DIR", 2, "malformed source name 'a b'"),
    ("vllm=MISSING", 3, "PREFLIGHT_FAILED check=flaggems_dir FlagGems directory does not exist"),
    ("vllm=EMPTY", 3, "missing benchmark and src/flag_gems or src/flaggems_vllm"),
])
def test_a_bad_second_source_is_one_line_and_a_documented_code(two, item, code, says):
    _, main, vllm, tmp = two
    (tmp / "empty").mkdir()
    item = (item.replace("MISSING", str(tmp / "nosuch")).replace("EMPTY", str(tmp / "empty"))
            .replace("DIR", str(vllm)))
    proc = _zl("ops", "--flaggems-dir", str(main), "--flaggems-dir", item)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert says in proc.stderr and "Traceback" not in proc.stderr


def test_an_unknown_operator_is_named_before_any_device_is_looked_for(two, tmp_path):
    _, main, vllm, tmp = two
    # No backend of this process finds a device (the fake one is not registered here):
    # a misspelt operator is still what the user hears about, with the sources' names.
    proc = _zl("screen", "--flaggems-dir", str(main), "--flaggems-dir", str(vllm),
               "--ops", "vllm:nosuch", "--switch", "DISABLE_MMA_V3", "--runs-root", str(tmp / "r"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        "zl screen: unknown operator 'vllm:nosuch' in the flaggems suite (source vllm); the "
        "sources are main, vllm, another's operators are NAME:op; 'zl ops' lists the 17 it offers")
    assert not (tmp / "r").exists()
