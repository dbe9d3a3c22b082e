"""The built-in suite's benchmark protocol, end to end in pytest, without a device.

A copy of the packaged ``benchmark/`` folder gets one extra benchmark whose
"Triton op" is wrong on one shape; pytest runs it with the provider's own
command line (the zl plugins swapped for a fake timer) against a stand-in
``torch`` that has just what ``base``/``conftest`` touch. This checks what the
GPU run cannot show cheaply: the options, the FAILED row and the failing test,
the table text, ``--record json``, do_bench looked up at call time, the
``benchmark.*`` module names the zl plugins look for, and the isolation from the
user's pytest settings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("triton")

from zl_core import Backend
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest
from zl_flaggems.host.builtin_provider import SUITE_DIR, BuiltinSuiteProvider

TORCH_STUB = '''\
"""A stand-in for torch with only what the built-in suite's base/conftest use."""


class dtype:
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__


float16, float32, bfloat16 = dtype("float16"), dtype("float32"), dtype("bfloat16")


class Size(tuple):
    def __repr__(self):
        return "torch.Size([" + ", ".join(str(d) for d in self) + "])"

    __str__ = __repr__


class Tensor:
    def __init__(self, values, dtype):
        self.values, self.dtype = list(values), dtype

    def size(self):
        return Size((len(self.values),))


class _Namespace:
    pass


backends = _Namespace()
backends.cuda = _Namespace()
backends.cuda.matmul = _Namespace()
backends.cuda.matmul.allow_tf32 = True

from . import testing  # noqa: E402
'''

TESTING_STUB = '''\
def assert_close(actual, expected, rtol, atol, equal_nan=False):
    bad = [i for i, (a, e) in enumerate(zip(actual.values, expected.values))
           if abs(a - e) > atol + rtol * abs(e)]
    if bad:
        raise AssertionError("Tensor-likes are not close!\\n\\nMismatched elements: "
                             f"{len(bad)} / {len(actual.values)}")
'''

FAKE_TIMER = '''\
import itertools
import sys

import triton.testing

_latencies = itertools.cycle([0.25, 0.125])  # torch first, then the Triton op


def _fake_do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    fn()
    print(f"FAKE_BENCH warmup={warmup} rep={rep} return_mode={return_mode}")
    return next(_latencies)


def pytest_runtest_setup(item):
    # Patched after benchmark.base was imported: only a call-time lookup sees it.
    triton.testing.do_bench = _fake_do_bench


def pytest_sessionfinish(session, exitstatus):
    names = sorted(m for m in sys.modules if m == "benchmark" or m.startswith("benchmark."))
    print("MODULES " + " ".join(names))
'''

FAKE_BENCHMARK = '''\
import os

import pytest
import torch

from . import base, consts

DTYPES = ("float16", "float32")
KINDS = ("fake",)


def reference(x):
    return torch.Tensor([v * 2 for v in x.values], x.dtype)


def triton_like(x):
    n = len(x.values)
    if n == 4 and os.environ.get("FAKE_MODE") == "crash":
        raise RuntimeError("device fell over\\nsecond line")
    return torch.Tensor([v * 2 + (1 if n == 3 else 0) for v in x.values], x.dtype)


def input_fn(shape, dtype, device):
    yield (torch.Tensor(range(shape[0]), dtype),)


class FakeBenchmark(base.GenericBenchmark):
    def set_more_shapes(self):
        return [(5,), (2,)]


@pytest.mark.fake
def test_fake():
    bench = FakeBenchmark(op_name="fake", torch_op=reference, gems_op=triton_like,
                                  input_fn=input_fn, dtypes=consts.torch_dtypes(DTYPES))
    bench.run()
'''

OK_ROW = "SUCCESS" + " " * 15 + "0.250000" + " " * 12 + "0.125000" + " " * 15 + "2.000" + " " * 10
NA_ROW = "FAILED" + " " * 21 + "N/A" + " " * 17 + "N/A" + " " * 17 + "N/A" + " " * 10


def table(dtype: str, rows: list[str]) -> str:
    return ("\nOperator: fake  Performance Test (dtype=torch." + dtype + ", mode=kernel,level=core)\n"
            "Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          Size Detail\n"
            + "-" * 95 + "\n" + "".join(r + "\n" for r in rows))


@pytest.fixture
def suite(tmp_path):
    root = tmp_path / "suite"
    shutil.copytree(SUITE_DIR / "benchmark", root / "benchmark",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(SUITE_DIR / "pytest.ini", root / "pytest.ini")
    (root / "benchmark" / "test_fake.py").write_text(FAKE_BENCHMARK)
    stubs = tmp_path / "stubs"
    (stubs / "torch").mkdir(parents=True)
    (stubs / "torch" / "__init__.py").write_text(TORCH_STUB)
    (stubs / "torch" / "testing.py").write_text(TESTING_STUB)
    (stubs / "zl_fake_timer.py").write_text(FAKE_TIMER)
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text("fake: {shapes: [[2], [3], [4]]}\n")
    return root, stubs, shapes


def run_suite(suite, tmp_path, extra_args=(), env=None):
    root, stubs, shapes = suite
    request = CellRequest(op=OpSpec.parse("fake"), backend=Backend(name="cuda"), out_dir=tmp_path,
                          python=sys.executable, source=str(root), shape_file=shapes)
    command = BuiltinSuiteProvider().cell_command(request)
    argv = list(command.argv)
    keep = []
    for i, arg in enumerate(argv):  # the zl plugins are tested elsewhere: swap in the fake timer
        if arg.startswith("zl_flaggems.cell.plugins.") or (arg == "-p" and i + 1 < len(argv)
                                                       and argv[i + 1].startswith("zl_flaggems.cell.plugins.")):
            continue
        keep.append(arg)
    keep[3:3] = ["-p", "zl_fake_timer"]
    full = {k: v for k, v in os.environ.items() if not k.startswith("ZL_")}
    full["PYTHONPATH"] = os.pathsep.join([str(stubs), *filter(None, [os.environ.get("PYTHONPATH")])])
    full["PYTEST_ADDOPTS"] = "--an-option-nobody-registered"  # the user's; the cell clears it
    full.update(command.env)
    full.update(env or {})
    return subprocess.run(keep + list(extra_args), cwd=command.cwd, env=full, capture_output=True,
                          check=False, text=True, timeout=300)


def test_a_mismatch_is_a_failed_row_and_a_failed_test(suite, tmp_path):
    report = tmp_path / "out" / "report.json"
    proc = run_suite(suite, tmp_path, ["--warmup", "7", "--iter", "9", "--level", "core",
                                       "--record", "json", "--output", str(report)])
    out = proc.stdout
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    for dtype in ("float16", "float32"):
        assert table(dtype, [OK_ROW + "[torch.Size([2])]", NA_ROW + "[torch.Size([3])]",
                             OK_ROW + "[torch.Size([4])]"]) in out
    assert "2 row(s) of fake differ from torch" in out
    # do_bench was reached through triton.testing at call time, with --warmup/--iter in ms.
    assert out.count("FAKE_BENCH warmup=7 rep=9 return_mode=median") == 8
    assert "MODULES benchmark benchmark.base benchmark.conftest benchmark.consts benchmark.test_fake" in out
    data = json.loads(report.read_text())["fake"]
    assert data["result"] == "failed" and data["test_case"] == "benchmark/test_fake.py::test_fake"
    assert [d["dtype"] for d in data["details"]] == ["torch.float16", "torch.float32"]
    row = data["details"][0]["result"][1]
    assert row["latency"] is None and "fake differs from torch" in row["error_msg"]
    root = suite[0]
    assert not list(root.rglob("__pycache__")) and not (root / ".pytest_cache").exists()


def test_another_error_prints_the_rows_so_far_and_stops(suite, tmp_path):
    proc = run_suite(suite, tmp_path, ["--level", "core", "--dtypes", "float32"],
                     env={"FAKE_MODE": "crash"})
    out = proc.stdout
    assert proc.returncode == 1
    assert table("float32", [OK_ROW + "[torch.Size([2])]", NA_ROW + "[torch.Size([3])]",
                             NA_ROW + "[torch.Size([4])]"]) in out
    assert "RuntimeError: device fell over" in out
    assert "dtype=torch.float16" not in out  # --dtypes float32 only


def test_all_rows_pass_and_comprehensive_merges_more_shapes(suite, tmp_path):
    shapes = suite[2]
    shapes.write_text("fake: {shapes: [[2]]}\n")
    proc = run_suite(suite, tmp_path, ["--dtypes", "float16", "--level", "comprehensive"])
    assert proc.returncode == 0, proc.stdout[-2000:]
    # set_more_shapes() is merged after the file's shapes, without duplicates.
    assert table("float16", [OK_ROW + "[torch.Size([2])]", OK_ROW + "[torch.Size([5])]"]).replace(
        "level=core", "level=comprehensive") in proc.stdout


def test_record_json_never_writes_into_the_suite(suite, tmp_path):
    proc = run_suite(suite, tmp_path, ["--record", "json", "--level", "core"])
    assert proc.returncode == 4
    assert "--record json needs --output PATH" in proc.stderr
    cell = tmp_path / "cell"
    cell.mkdir()
    proc = run_suite(suite, tmp_path, ["--record", "json", "--level", "core"],
                     env={"ZL_CELL_DIR": str(cell)})
    assert proc.returncode == 1
    assert json.loads((cell / "benchmark_result.json").read_text())["fake"]["result"] == "failed"
    assert not list(suite[0].rglob("benchmark_result.json"))


def test_unknown_dtype_and_mode_are_rejected_by_the_options(suite, tmp_path):
    proc = run_suite(suite, tmp_path, ["--dtypes", "int8"])
    assert proc.returncode == 4 and "invalid choice: 'int8'" in proc.stderr
    proc = run_suite(suite, tmp_path, ["--mode", "wrapper"])
    assert proc.returncode == 4 and "invalid choice: 'wrapper'" in proc.stderr


def test_zl_shapes_and_results_plugins_read_the_suite(suite, tmp_path):
    """The FlagGems plugins find this suite's classes by FlagGems' names and shapes."""
    root, stubs, shapes = suite
    shapes.write_text("fake: {shapes: [[2], [3]]}\n")
    cell = tmp_path / "cell"
    cell.mkdir()
    argv = [sys.executable, "-m", "pytest", "-p", "zl_fake_timer", "-p", "no:cacheprovider",
            "-c", str(root / "pytest.ini"), "--rootdir", str(root), "-s",
            "-p", "zl_flaggems.cell.plugins.shapes", "-p", "zl_flaggems.cell.plugins.results",
            "benchmark/test_fake.py::test_fake", "--level", "core", "--dtypes", "float16"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZL_")}
    env.update({"PYTHONPATH": os.pathsep.join([str(stubs), *filter(None, [os.environ.get("PYTHONPATH")])]),
                "ZL_CELL_DIR": str(cell), "ZL_OP": "fake", "ZL_PROVIDER": "builtin",
                "ZL_SHAPE_FILE": str(shapes), "PYTHONDONTWRITEBYTECODE": "1"})
    proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads((cell / "results.json").read_text())["rows"]
    assert [(r["dtype"], r["size_detail"], r["status"]) for r in rows] == [
        ("float16", "[torch.Size([2])]", "SUCCESS"), ("float16", "[torch.Size([3])]", "FAILED")]
    assert rows[0]["latency_ms"] == 0.125 and "differs from torch" in rows[1]["error"]
    assert "shapes:" in (cell / "shapes.yaml").read_text()
