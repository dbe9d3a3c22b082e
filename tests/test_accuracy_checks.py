"""A side's accuracy tests as a cell: the command each suite gives for CellRequest.check,
run for real (the FlagGems suite on a fake checkout's tests/, the built-in suite collecting
its benchmark under --metrics accuracy), and the JUnit XML read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import fake_flaggems
import pytest
from zl_core import Backend
from zl_core.campaigns.checks import ended
from zl_core.cells.cell import EXIT_STALLED, CellOutcome, run_cell
from zl_core.foundation.errors import PreflightError
from zl_core.interface import contract
from zl_core.interface.caliber import IDENTITY_NAME
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest, CheckSpec, OpInfo
from zl_core.seal.correctness import read_report
from zl_flaggems.common.plugin_order import CHECK_PLUGINS, COMPILE_POOL, pytest_args
from zl_flaggems.host.builtin_provider import BuiltinSuiteProvider
from zl_flaggems.host.provider import FlagGemsProvider

BACKEND = Backend(name="fakegpu", flaggems_vendor="fakevendor", graph_capture=True)


def run(command, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {**os.environ, **command.env}
    for name in command.unset:
        env.pop(name, None)
    return subprocess.run([*command.argv, *extra], cwd=command.cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_flaggems_runs_the_operators_marked_tests_and_reports_them(tmp_path, fake_host):
    root = fake_flaggems.build(tmp_path / "FlagGems")
    provider = FlagGemsProvider()
    check = provider.default_check(OpInfo(op="fakemm", op_file="fake"), str(root))
    assert check == CheckSpec(file="tests/test_fake.py", select=("-m", "fakemm"))
    out = tmp_path / "check" / "B"
    out.mkdir(parents=True)
    req = CellRequest(op=OpSpec.parse("fakemm:fake"), backend=BACKEND, out_dir=out,
                      python=sys.executable, source=str(root), check=check)
    command = provider.cell_command(req)
    assert "--level" not in command.argv  # the benchmark's options are not the tests'
    done = run(command)
    assert done.returncode == 0, done.stdout + done.stderr
    result = read_report(out / contract.ACCURACY_REPORT)
    assert (result.passed, result.failed, result.ok) == (3, 0, True)  # fakemm's 3, not fakeadd's
    # A failing test is a failure of the side, read from the same report.
    test = root / "tests" / "test_fake.py"
    test.write_text(test.read_text().replace("assert n * 2 == n + n", "assert n * 2 == n + n + (n == 2)"))
    assert run(command).returncode == 1
    result = read_report(out / contract.ACCURACY_REPORT)
    assert (result.passed, result.failed, result.ok) == (2, 1, False)


def check_request(root: Path, fake_host, monkeypatch, test_file: str, body: str, window_s: float):
    """A check cell of the fake checkout's ``fakemm`` tests in ``test_file`` (``body``),
    under a stall window of ``window_s``."""
    (root / "tests" / test_file).write_text("import time\n\nimport pytest\n\n\n" + body)
    # The fake checkout's torch stub: the preflight finds torch, triton and flag_gems.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root / "stubs"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return CellRequest(op=OpSpec.parse("fakemm:fake"), backend=fake_host.get_backend("fakegpu"),
                       device="0", out_dir=root.parent / "check" / "A", python=sys.executable,
                       source=str(root), check=CheckSpec(file=f"tests/{test_file}", select=("-m", "fakemm")),
                       stall_timeout_s=window_s, timeout_s=120.0)


@pytest.mark.slow
def test_a_flaggems_check_stuck_in_one_test_stalls_with_its_stacks_on_disk(tmp_path, fake_host, monkeypatch):
    # pytest -q prints a dot per finished test: one long test is silent. zl's phases plugin
    # goes into the check (its beats tell a compiling test from a stuck one) and arms the
    # stacks, so the stall names the test instead of SIGUSR1 killing pytest with no trace.
    req = check_request(fake_flaggems.build(tmp_path / "FlagGems"), fake_host, monkeypatch, "test_stuck.py",
                        "@pytest.mark.fakemm\ndef test_waits_forever():\n    time.sleep(600)\n", 3.0)
    provider = FlagGemsProvider()
    assert tuple(pytest_args(CHECK_PLUGINS)) == provider.cell_command(req).argv[5:9]
    outcome = run_cell(fake_host, provider, req)
    assert outcome.stalled and outcome.rc == EXIT_STALLED and outcome.elapsed_s < 120
    # The campaign's line says stalled, and where the stacks are (not "timed out").
    assert ended(outcome, req).startswith(
        f"rc=125 (stalled: no output or progress for 3s; stacks in {outcome.cell_dir / 'stacks.txt'}) ")
    stacks = (outcome.cell_dir / contract.STACKS_FILE).read_text()
    assert "test_waits_forever" in stacks and "test_stuck.py" in stacks
    result = read_report(outcome.cell_dir / contract.ACCURACY_REPORT)
    assert not result.ok and "wrote no report" in result.problem  # a problem, never a pass


@pytest.mark.slow
def test_a_flaggems_check_of_many_quiet_tests_is_not_stalled(tmp_path, fake_host, monkeypatch):
    # Each test takes most of the window and pytest -q's dots end no line: only the
    # plugin's beat at each finished test shows the orchestrator that the check moves.
    req = check_request(fake_flaggems.build(tmp_path / "FlagGems"), fake_host, monkeypatch, "test_slow.py",
                        "@pytest.mark.fakemm\n@pytest.mark.parametrize('n', range(5))\n"
                        "def test_each_takes_a_while(n):\n    time.sleep(2.0)\n", 4.0)
    outcome = run_cell(fake_host, FlagGemsProvider(), req)
    assert outcome.rc == 0 and not outcome.stalled, (outcome.cell_dir / "run.log").read_text()
    assert ended(outcome, req).startswith("rc=0 ") and "(" not in ended(outcome, req)
    result = read_report(outcome.cell_dir / contract.ACCURACY_REPORT)
    assert (result.passed, result.failed, result.ok) == (5, 0, True)


# A check test that autotunes with Triton's own tuner over four configs; the kernel is a
# stand-in whose run records whether it was compiled (warmup) under AsyncCompileMode.
AUTOTUNING_TEST = """
import triton
from triton.runtime import _async_compile
from triton.runtime.autotuner import Autotuner

CALLS = []


class StandIn:
    fn = staticmethod(lambda x, n, BLOCK: None)

    def run(self, *args, grid, warmup, **kwargs):
        CALLS.append((kwargs["BLOCK"], warmup, _async_compile.active_mode.get() is not None))


@pytest.mark.fakemm
def test_autotunes_a_new_shape():
    fn = StandIn()
    def bench(kernel_call, quantiles):
        kernel_call()
        return [1.0 if CALLS[-1][0] == 64 else 2.0] * 3
    tuner = Autotuner(fn, ["x", "n"], [triton.Config({"BLOCK": b}) for b in (32, 64, 128, 256)],
                      ["n"], None, None, do_bench=bench)
    tuner.run(1, 1024, grid=(1,), warmup=False)
    assert tuner.best_config.kwargs == {"BLOCK": 64}
    print("COMPILED_UP_FRONT", sorted(b for b, warm, pooled in CALLS if warm and pooled))
"""


def test_a_flaggems_check_compiles_an_autotune_sweep_side_by_side(tmp_path, fake_host, monkeypatch):
    # A check's tests autotune every new shape over the whole config space; on an H100 mm's
    # seven checks spent 214 of 235 s compiling one candidate after the other. The compile
    # pool goes into check cells as into benchmark cells: the candidates compile on the
    # cell's workers first, and the tuner's pick is the same.
    pytest.importorskip("triton")
    req = check_request(fake_flaggems.build(tmp_path / "FlagGems"), fake_host, monkeypatch,
                        "test_tuned.py", AUTOTUNING_TEST, 60.0)
    req = attrs.evolve(req, compile_workers=2)
    assert COMPILE_POOL in FlagGemsProvider().cell_command(req).argv
    outcome = run_cell(fake_host, FlagGemsProvider(), req)
    log = (outcome.cell_dir / "run.log").read_text()
    assert outcome.rc == 0, log
    identity = json.loads((outcome.cell_dir / IDENTITY_NAME).read_text())
    assert (identity["parallel_compiles"], identity["parallel_compile_batches"]) == (4, 1), identity
    assert identity["plugins"] == list(CHECK_PLUGINS)
    assert read_report(outcome.cell_dir / contract.ACCURACY_REPORT).passed == 1


def test_flaggems_names_missing_accuracy_tests_before_running(tmp_path, fake_host):
    root = fake_flaggems.build(tmp_path / "FlagGems")
    provider = FlagGemsProvider()
    assert provider.default_check(OpInfo(op="fakeadd", op_file="nosuchfile"), str(root)) is None
    req = CellRequest(op=OpSpec.parse("fakeadd:fake"), backend=BACKEND, out_dir=tmp_path,
                      python=sys.executable, source=str(root),
                      check=CheckSpec(file="tests/test_gone.py", select=("-m", "fakeadd")))
    with pytest.raises(PreflightError) as info:
        provider.preflight(req)
    assert info.value.check == "accuracy_tests" and "tests/test_gone.py" in str(info.value)


def test_the_builtin_suite_checks_its_benchmark_and_times_nothing(tmp_path):
    provider = BuiltinSuiteProvider()
    check = provider.default_check(OpInfo(op="softmax", op_file="softmax"), None)
    assert check.select == ("benchmark/test_softmax.py::test_softmax",)
    req = CellRequest(op=OpSpec.parse("softmax"), backend=Backend(name="cuda"), out_dir=tmp_path,
                      python=sys.executable, check=check)
    command = provider.cell_command(req)
    assert "--metrics" in command.argv and command.argv[command.argv.index("--metrics") + 1] == "accuracy"
    assert tuple(pytest_args(CHECK_PLUGINS)) == command.argv[5:9]  # watched like any cell
    # No device here: collecting proves the suite takes the options (--metrics accuracy, the
    # JUnit report) and finds the test; its run needs torch and a device.
    done = run(command, ("--collect-only",))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_softmax" in done.stdout


@pytest.mark.parametrize("body, problem", [
    (None, "wrote no report"),
    ("<not xml", "cannot be read"),
    ('<testsuite tests="2" failures="0" errors="0" skipped="2"/>', "no accuracy test ran"),
    ('<testsuite tests="x"/>', "not numbers"),
])
def test_a_report_that_says_nothing_is_a_problem_never_a_pass(tmp_path, body, problem):
    path = tmp_path / "accuracy.xml"
    if body is not None:
        path.write_text(body)
    result = read_report(path)
    assert problem in result.problem and not result.ok


def test_a_check_that_ran_out_of_time_says_so(tmp_path):
    req = CellRequest(op=OpSpec.parse("fakemm"), backend=BACKEND, out_dir=tmp_path, python=sys.executable,
                      timeout_s=600.0)
    outcome = CellOutcome(cell_dir=tmp_path, rc=124, timed_out=True, elapsed_s=600.4, start=0.0, end=600.4,
                          markers={}, success_rows=0, failed_rows=0)
    assert ended(outcome, req) == "rc=124 (timed out after 600s) 600.4s"


def test_a_selection_of_node_ids_goes_to_pytest_without_its_file():
    marked = CheckSpec(file="tests/test_mm.py", select=("-m", "mm", "-k", "dtype0 and not x"))
    assert marked.pytest_args() == ("tests/test_mm.py", "-m", "mm", "-k", "dtype0 and not x")
    nodes = CheckSpec(file="tests/test_mm.py", select=("tests/test_mm.py::test_mm",))
    assert nodes.pytest_args() == ("tests/test_mm.py::test_mm",)  # named once, not twice
