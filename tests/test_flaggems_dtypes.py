"""FlagGems' dtypes, as its own files state them, through the command line: each
operator's dtypes read from its benchmark file, the benchmark command line's ``--dtypes``
choices read from its conftest (``zl ops`` shows both), a dtype either would refuse
refused by ``zl screen`` and ``zl freeze`` before any cell, and the dtype fallback on
FlagGems' own rejection.

The facts the fake checkout (tests/fake_flaggems.py) copies, from FlagGems ed2508b:
- benchmark/conftest.py: ``--dtypes`` is ``action="append"`` with ``choices=[str(ele)
  .split(".")[-1] for ele in consts.FLOAT_DTYPES + consts.INT_DTYPES + consts.BOOL_DTYPES
  + [torch.cfloat]]``: float16, float32, bfloat16, int16, int32, bool, complex64.
- benchmark/base.py: ``Benchmark.DEFAULT_DTYPES = consts.FLOAT_DTYPES``; ``set_dtypes``
  raises ``ValueError(f"Given dtype(s) '{...}'" f"can't be supported by this op
  '{self.op_name}'")`` for a requested dtype outside ``self.dtypes``.
- benchmark/test_randperm.py: ``dtypes=[torch.int32, torch.int64]``, so ``randperm:int64``
  is refused by the command line and ``randperm:float16`` by the benchmark.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import fake_flaggems
import pytest
from fake_flaggems import FakeGpuHost
from zl_core import PluginHost
from zl_core.cli import main
from zl_flaggems.host.provider import FlagGemsProvider

CHOICES = ["float16", "float32", "bfloat16", "int16", "int32", "bool", "complex64"]


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    """The fake checkout with the dtype benchmarks, its torch stand-in on the import path,
    and a host whose only device is the fake one."""
    import zl_core.plugins.host as host_module

    root = fake_flaggems.add_dtype_benchmarks(fake_flaggems.build(tmp_path / "FlagGems"))
    monkeypatch.setenv("ZL_DISABLE_PLUGINS", "cuda,musa,rocm,ascend")
    for key in ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "FLAGGEMS_DIR", "ZL_BACKEND"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root / "stubs"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "runs"))
    host = PluginHost()
    host.register(FakeGpuHost(), name="fakegpu", package="tests", version="0")
    monkeypatch.setattr(host_module, "_HOST", host)
    return root


def zl(*argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return int(exc.code)


def screen(root: Path, *ops: str, command: str = "screen") -> int:
    return zl(command, "--flaggems-dir", root, "--backend", "fakegpu", "--switch", "FAKE_SWITCH",
              "--force-switch", "--ops", *ops)


def test_zl_ops_shows_each_operators_dtypes_and_the_command_lines(checkout, capsys):
    assert zl("ops", "--flaggems-dir", checkout, "--json") == 0
    listed = {o["op"]: o for o in json.loads(capsys.readouterr().out)}
    dtypes = {op: listed[op]["dtypes"] for op in listed}
    assert dtypes["fakerand"] == ["int32", "int64"]  # a literal list, int64 outside the choices
    assert dtypes["fakeint"] == ["int16", "int32", "bool"]  # consts groups added up
    assert dtypes["fakelocal"] == ["float32"]  # the test's own list
    assert dtypes["fakeclass"] == ["bfloat16"]  # its class's DEFAULT_DTYPES
    assert dtypes["fakehelper"] == ["float32"]  # built by a helper of the file
    assert dtypes["fakeadd"] == ["float16", "float32"]  # the base class's DEFAULT_DTYPES
    assert dtypes["fakerng"] == ["float16"]
    # What depends on the run is not guessed: a parameter, a call, a class's own filter, a
    # list appended to under a condition.
    assert dtypes["fakeparam"] == dtypes["fakedevice"] == dtypes["fakeown"] == []
    assert dtypes["fakefp64"] == []
    assert all(o["dtype_choices"] == CHOICES for o in listed.values())

    assert zl("ops", "--flaggems-dir", checkout) == 0
    out = capsys.readouterr().out
    assert f"dtypes a filter may name: {', '.join(CHOICES)}; a dtype in parentheses" in out
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines()[3:]}
    assert rows["fakerand"] == "int32,(int64)" and rows["fakedevice"] == "-"


@pytest.mark.parametrize(("spec", "says"), [
    # int64 is not one of FlagGems' --dtypes choices: pytest would refuse the command line.
    ("fakerand:fake_dtypes:int64", ("zl screen: dtype 'int64' of fakerand is not one the flaggems "
     "suite's benchmark command line accepts (float16, float32, bfloat16, int16, int32, bool, "
     "complex64) (did you mean int32?); its benchmark runs int32, int64, of which a dtype filter can "
     "name int32; name it, or none to run them all")),
    # float16 is a choice, but this benchmark never runs it: set_dtypes would raise.
    ("fakerand:fake_dtypes:float16", ("zl screen: operator fakerand has no dtype 'float16': its "
     "benchmark runs int32, int64, of which a dtype filter can name int32; name it, or none to run "
     "them all (zl ops lists each operator's dtypes)")),
    ("fakemm:fake:flaot16", "(did you mean float16?)"),
    # Unknown dtypes of the benchmark: the command line's choices still hold.
    ("fakedevice:fake_dtypes:float64", ("dtype 'float64' of fakedevice is not one the flaggems suite's "
     "benchmark command line accepts (float16, float32, bfloat16, int16, int32, bool, complex64) "
     "(did you mean float16 or bfloat16?); name one of those")),
])
def test_a_dtype_flaggems_would_refuse_is_refused_before_any_cell(checkout, tmp_path, capsys, spec, says):
    for command in ("screen", "ab"):
        assert screen(checkout, "fakeadd:fake", spec, command=command) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and says.replace("zl screen", f"zl {command}") in err, err
        assert "Traceback" not in err
        assert not (tmp_path / "runs").exists()  # nothing written, no cell started


def test_zl_run_refuses_them_too_before_its_cell(checkout, tmp_path, capsys):
    out = tmp_path / "cell"
    assert zl("run", "--flaggems-dir", checkout, "--backend", "fakegpu", "--op", "fakerand:fake_dtypes",
              "--dtypes", "int64", "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("zl run: dtype 'int64' of fakerand is not one the flaggems suite's "
                          "benchmark command line accepts"), err
    assert not out.exists()


def test_zl_freeze_names_each_dtype_flaggems_would_refuse(checkout, tmp_path, capsys):
    subprocess.run(["git", "init", "-q"], cwd=checkout, check=True)
    subprocess.run(["git", "add", "-A"], cwd=checkout, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fake"],
                   cwd=checkout, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True,
                            check=True).stdout.strip()
    manifest = tmp_path / "m.yaml"
    manifest.write_text(textwrap.dedent(f"""\
        schema: 1
        campaign: dtypes
        claim: the dtypes FlagGems runs
        suite: flaggems
        sources:
          - {{name: main, path: {checkout}, commit: {commit}}}
        backend: fakegpu
        device: "0"
        switch: {{name: FAKE_SWITCH, a: "0", b: "1"}}
        correctness: false
        workloads:
          - {{op: fakerand, dtypes: [int64], reason: the int64 path}}
          - {{op: fakelocal, dtypes: [float16], reason: the float16 path}}
          - {{op: fakeint, dtypes: [int32], reason: the int32 path}}
        """))
    assert zl("freeze", manifest, "--dry-run") == 2
    lines = capsys.readouterr().err.splitlines()
    found = [line.strip() for line in lines[1:]]
    assert found[0].startswith("workloads[0] (fakerand).dtypes: dtype 'int64' of fakerand is not one "
                               "the flaggems suite's benchmark command line accepts"), found
    assert found[1].startswith("workloads[1] (fakelocal).dtypes: operator fakelocal has no dtype "
                               "'float16'"), found
    assert "its benchmark runs float32; name it, or none to run them all" in found[1]
    assert not any(p.startswith("workloads[2]") for p in found), found


@pytest.mark.slow
def test_a_benchmark_that_refuses_the_filter_in_flaggems_words_runs_again_without_it(checkout, tmp_path,
                                                                                     capsys):
    # fakedevice's dtypes come from a call (unknown before it runs); it runs float32 only.
    assert screen(checkout, "fakedevice:fake_dtypes:float16") == 0
    err = capsys.readouterr().err
    assert ("fakedevice A: the benchmark rejects dtypes float16; running it again without the "
            "dtype filter") in err
    [campaign] = (tmp_path / "runs").glob("screen_*")
    cell = campaign / "fakedevice" / "A"
    identity = json.loads((cell / "run_identity.json").read_text())
    assert identity["retry_notes"] == ["dtype_fallback"] and identity["dtypes"] == []
    # The refused attempt is kept with FlagGems' own words; the rerun measured float32.
    kept = (campaign / "fakedevice" / "A.attempt1" / "run.log").read_text()
    assert "Given dtype(s) 'torch.float16'can't be supported by this op 'fakedevice'" in kept
    assert "dtype=torch.float32" in (cell / "run.log").read_text()


def test_only_flaggems_own_refusal_counts_as_a_rejected_filter(tmp_path):
    provider = FlagGemsProvider()
    (tmp_path / "run.log").write_text(
        "E       ValueError: Given dtype(s) 'torch.float16, torch.bfloat16'can't be supported by "
        "this op 'randperm'\n")
    assert provider.rejected_dtypes(tmp_path)
    (tmp_path / "run.log").write_text("E       ValueError: Invalid metrics: gbps for operation: 'mm'\n"
                                      "ERROR: usage: pytest: argument --dtypes: invalid choice: 'int64'\n")
    assert not provider.rejected_dtypes(tmp_path)
    assert not provider.rejected_dtypes(tmp_path / "no-such-cell")
