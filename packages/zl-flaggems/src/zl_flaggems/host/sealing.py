"""What binds a sealed campaign to a FlagGems checkout (host side): its commit, its
uncommitted changes, the files that define how an operator is measured, where the cells
import Triton and FlagGems from; and the accuracy tests (``tests/``) that check a side."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zl_core.foundation import interrupts
from zl_core.foundation.errors import PreflightError, ZlError
from zl_core.foundation.module_origins import imported, origins
from zl_core.interface import contract
from zl_core.interface.provider import CellCommand, CellRequest, CheckSpec, OpInfo

from zl_flaggems.common import plugin_order
from zl_flaggems.common.gems_env import GEMS_PACKAGE_ENV
from zl_flaggems.host.checkout import cell_pythonpath, provider_commit, uncommitted_changes
from zl_flaggems.host.preflight import BENCH_DIR

#: FlagGems' accuracy tests: ``tests/test_<op>.py``, each test marked with its operator.
TESTS_DIR = "tests"
#: Files of the checkout's root that configure how pytest runs the benchmarks.
ROOT_FILES = ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg")
#: The benchmark folder's shared harness: every top-level file but the per-op tests.
HARNESS_SUFFIXES = (".py", ".yaml", ".yml")
#: Collecting imports torch and FlagGems in the cells' interpreter: seconds, not minutes.
COLLECT_TIMEOUT_S = 300
#: zl's plugins every benchmark cell loads, whatever its backend and options.
CELL_PLUGINS = (plugin_order.PHASES, plugin_order.VENDOR, plugin_order.SEED, plugin_order.SHAPES,
                plugin_order.COMPILE_POOL, plugin_order.FOREIGN, plugin_order.RESULTS)


class FlagGemsSealing:
    """Mixed into the FlagGems provider (it supplies ``_root``, ``gems_package_of`` and
    ``cell_env``)."""

    supports_checks = True
    name: str

    if TYPE_CHECKING:  # supplied by the provider this is mixed into
        def _root(self, source: str | None) -> Path | None: ...

        @staticmethod
        def gems_package_of(root: Path) -> str: ...

        def cell_env(self, request: CellRequest, root: Path) -> dict[str, str]: ...

    def default_check(self, op: OpInfo, source: str | None) -> CheckSpec | None:
        """``tests/test_<op_file>.py`` (else ``test_<op>.py``), its tests marked ``op``."""
        root = self._root(source)
        if root is None:
            return None
        for name in dict.fromkeys((op.op_file, op.op)):
            if (root / TESTS_DIR / f"test_{name}.py").is_file():
                return CheckSpec(file=f"{TESTS_DIR}/test_{name}.py",
                                 select=("-m", op.op))
        return None

    def check_tests_exist(self, check: CheckSpec, root: Path) -> None:
        path = root / check.file
        if not path.is_file():
            raise PreflightError("accuracy_tests", f"no {check.file} in {root}; name the operator's "
                                 "accuracy tests in the manifest (correctness.file)")

    def collect_check(self, check: CheckSpec, *, source: str | None, python: str) -> list[str] | None:
        """``pytest --collect-only`` of the accuracy tests in the checkout, with the import
        path its cells get: the node ids the selection keeps ([] when it keeps none)."""
        root = self._root(source)
        if root is None:
            return None
        argv = [python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                *check.pytest_args()]
        env = {**os.environ, "PYTHONPATH": cell_pythonpath(root, os.environ.get("PYTHONPATH", "")),
               GEMS_PACKAGE_ENV: self.gems_package_of(root)}
        try:
            # zl freeze collects side by side on worker threads: an interrupt must end these.
            proc = interrupts.run(argv, cwd=root, env=env, timeout=COLLECT_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ZlError(f"collecting {check.file} took over {COLLECT_TIMEOUT_S} s; "
                          "check that its imports finish") from None
        except OSError as exc:
            raise ZlError(f"cannot run {python} to collect {check.file}: {exc.strerror}") from None
        if proc.returncode == 5:  # pytest: no tests collected
            return []
        if proc.returncode != 0:
            lines = [ln.strip() for ln in (proc.stdout + "\n" + proc.stderr).splitlines() if ln.strip()]
            why = next((ln for ln in lines if ln.startswith(("ERROR", "E ", "error:"))), lines[-1] if lines else "")
            raise ZlError(f"{check.file} {shlex.join(check.select)}: its tests cannot be collected "
                          f"(pytest exit {proc.returncode}: {why[:200]})")
        return [line.strip() for line in proc.stdout.splitlines() if "::" in line]

    def check_command(self, request: CellRequest, root: Path, host: Any = None) -> CellCommand:
        """pytest on the accuracy tests, in the side's environment (its switch value,
        the checkout's package), writing JUnit XML for the core.

        Only zl's plugins that change no test go in (``plugin_order.CHECK_PLUGINS`` says why),
        with the backend's compat plugins that ``host`` lists (``plugin_order.check_modules``)."""
        check = request.check
        if check is None:
            raise ValueError("check_command runs a request's accuracy tests: this request has none")
        plugins = plugin_order.check_modules(request.backend, host).modules
        argv = (request.python, "-m", "pytest", "-p", "no:cacheprovider",
                *plugin_order.pytest_args(plugins), "-q",
                *check.pytest_args(),
                f"--junitxml={Path(request.out_dir) / contract.ACCURACY_REPORT}")
        identity = {"provider": self.name, "provider_commit": provider_commit(root),
                    "source": str(root), "gems_package": self.gems_package_of(root),
                    "check": check.to_json(), "plugins": list(plugins)}
        return CellCommand(argv=argv, cwd=root, env=self.cell_env(request, root), identity=identity)

    def workload_files(self, op: OpInfo, source: str | None) -> list[Path]:
        root = self._root(source)
        if root is None:
            return []
        bench = root / BENCH_DIR
        harness = [p for p in sorted(bench.glob("*")) if p.is_file()
                   and p.suffix in HARNESS_SUFFIXES and not p.name.startswith("test_")]
        return [bench / f"test_{op.op_file}.py", *harness,
                *(root / name for name in ROOT_FILES if (root / name).is_file())]

    def source_commit(self, source: str | None) -> str | None:
        root = self._root(source)
        return provider_commit(root) if root is not None else None

    def source_changes(self, source: str | None) -> list[str]:
        root = self._root(source)
        return uncommitted_changes(root) if root is not None else []

    def frozen_imports(self, *, python: str, source: str | None) -> dict[str, str | None]:
        """torch, Triton and FlagGems as a cell imports them: for real, in that order, with
        the cell's import path, then zl's cell plugins (named only when one
        fails). Looking them up would pass an interpreter without torch, which finds
        FlagGems but cannot import it; the seconds this costs are spent once a campaign."""
        root = self._root(source)
        if root is None:
            return origins(python, ["triton"])
        path = cell_pythonpath(root, os.environ.get("PYTHONPATH", ""))
        bound = ["torch", "triton", self.gems_package_of(root)]
        found = imported(python, [*bound, *CELL_PLUGINS], env={**os.environ, "PYTHONPATH": path},
                         cwd=str(root), timeout_s=COLLECT_TIMEOUT_S)
        return {m: o for m, o in found.items() if m in bound or o is None}
