"""The MUSA backend's FlagGems compat plugin: exactly its pinned guards, only on mthreads.

Real pytest runs over a fixture checkout whose benchmarks carry the guards the plugin
names, near misses of them (another test of the same file, another reason, an xfail,
a guard the table does not list) and a vendor-independent guard.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_backend_musa.plugin as musa_plugin
from zl_backend_musa import flaggems_compat
from zl_core import PluginHost

PACKAGE = '''
import os
vendor_name = os.environ.get("GEMS_VENDOR", "unset")
device = "fakedev"
'''

FILES = {
    "src/flag_gems/__init__.py": PACKAGE,
    "benchmark/conftest.py": "",
    "benchmark/test_fft.py": '''
        import pytest
        import flag_gems

        @pytest.mark.skipif(True, reason="CUDA is not available")
        def test_perf_fft():
            pass

        # Same reason, another test: the guard is pinned to test_perf_fft only.
        @pytest.mark.skipif(True, reason="CUDA is not available")
        def test_perf_ifft():
            pass

        @pytest.mark.skipif(True, reason="CUDA required")
        def test_perf_rfft():
            pass

        @pytest.mark.xfail(True, reason="CUDA is not available", run=False)
        def test_perf_hfft():
            pass
    ''',
    "benchmark/test_top_k_per_row_decode.py": '''
        import pytest
        import flag_gems

        pytestmark = pytest.mark.skipif(True, reason="CUDA device required")

        def test_top_k_per_row_decode():
            pass

        @pytest.mark.parametrize("n", [1, 2])
        def test_top_k_per_row_sizes(n):
            pass

        @pytest.mark.skipif(True, reason="vLLM not installed")
        def test_top_k_per_row_vllm():
            pass
    ''',
    "benchmark/test_grid_sample.py": '''
        import pytest
        import flag_gems

        @pytest.mark.skipif(True, reason="CUDA is required.")
        class TestGridSample:
            def test_nearest(self):
                pass
    ''',
}
# A FlagGems-vllm checkout: its benchmarks import flaggems_vllm, never flag_gems.
VLLM_FILES = {
    "src/flaggems_vllm/__init__.py": PACKAGE,
    "benchmark/conftest.py": "",
    "benchmark/test_fft.py": '''
        import pytest
        import flaggems_vllm

        @pytest.mark.skipif(True, reason="CUDA is not available")
        def test_perf_fft():
            pass
    ''',
}

LIFTED = {"test_fft.py::test_perf_fft", "test_top_k_per_row_decode.py::test_top_k_per_row_decode",
          "test_top_k_per_row_decode.py::test_top_k_per_row_sizes[1]",
          "test_top_k_per_row_decode.py::test_top_k_per_row_sizes[2]"}

REPORTER = '''
import json, os

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome == "skipped":
        with open(os.environ["OUTCOMES"], "a") as fh:
            fh.write(json.dumps([report.nodeid, report.outcome]) + "\\n")
'''


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (root.parent / "outcome_reporter.py").write_text(REPORTER, encoding="utf-8")
    return root


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return _write(tmp_path / "FlagGems", FILES)


def _run(root: Path, vendor: str, *files: str) -> tuple[dict[str, str], str]:
    outcomes = root.parent / f"outcomes-{vendor}.jsonl"
    outcomes.unlink(missing_ok=True)
    env = {**os.environ, "GEMS_VENDOR": vendor, "OUTCOMES": str(outcomes),
           "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root.parent),
                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-p", "zl_backend_musa.flaggems_compat", "-p", "outcome_reporter", *files],
        cwd=root / "benchmark", env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = {}
    for line in outcomes.read_text(encoding="utf-8").splitlines():
        nodeid, outcome = json.loads(line)
        seen[nodeid] = outcome
    return seen, proc.stderr


def test_removes_exactly_the_pinned_guards_on_mthreads(checkout):
    seen, stderr = _run(checkout, "mthreads", "test_fft.py", "test_top_k_per_row_decode.py",
                        "test_grid_sample.py")
    passed = {n for n, outcome in seen.items() if outcome == "passed"}
    assert passed == LIFTED
    assert seen["test_fft.py::test_perf_ifft"] == "skipped"  # pinned to test_perf_fft
    assert seen["test_fft.py::test_perf_rfft"] == "skipped"  # another reason
    assert seen["test_fft.py::test_perf_hfft"] == "skipped"  # an xfail, not a skipif
    assert seen["test_top_k_per_row_decode.py::test_top_k_per_row_vllm"] == "skipped"
    assert seen["test_grid_sample.py::TestGridSample::test_nearest"] == "skipped"  # kept on purpose
    # The module-level pytestmark is one guard, removed once.
    said = [line for line in stderr.splitlines() if line.startswith("[zl musa-compat]")]
    assert said == [("[zl musa-compat] removed 2 stale CUDA-only skip guard(s): "
                    "1 from test_fft.py, 1 from test_top_k_per_row_decode.py")]


def test_inert_on_another_vendor(checkout):
    seen, stderr = _run(checkout, "nvidia", "test_fft.py", "test_top_k_per_row_decode.py")
    assert seen and set(seen.values()) == {"skipped"}
    assert "musa-compat" not in stderr


def test_applies_to_the_package_the_benchmark_imports(tmp_path):
    root = _write(tmp_path / "FlagGems-vllm", VLLM_FILES)
    seen, stderr = _run(root, "mthreads", "test_fft.py")
    assert seen == {"test_fft.py::test_perf_fft": "passed"}
    assert "removed 1 stale" in stderr


def test_table_is_pinned():
    # A change to the table is a change of what zl claims was verified on an S5000.
    assert {(g.file, g.reason, g.test) for g in flaggems_compat.STALE_GUARDS} == {
        ("test_fft.py", "CUDA is not available", "test_perf_fft"),
        ("test_top_k_per_row_decode.py", "CUDA device required", None),
    }


def test_declared_by_the_musa_backend_only():
    host = PluginHost()
    host.register(musa_plugin, name="musa", package="zl-backend-musa", version="0.1.0")
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    backends = {b.name: b for b in host.backends()}
    assert host.compat_plugins(backends["musa"]) == ["zl_backend_musa.flaggems_compat"]
    assert host.compat_plugins(backends["cuda"]) == []
