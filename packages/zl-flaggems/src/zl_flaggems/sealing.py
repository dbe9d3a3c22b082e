"""What binds a sealed campaign to a FlagGems checkout (host side): its commit, its
uncommitted changes, the files that define how an operator is measured, and where the
cells import Triton and FlagGems from."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from zl_core.module_origins import origins
from zl_core.provider import OpInfo

from zl_flaggems.preflight import BENCH_DIR

#: Files of the checkout's root that configure how pytest runs the benchmarks.
ROOT_FILES = ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg")
#: The benchmark folder's shared harness: every top-level file but the per-op tests.
HARNESS_SUFFIXES = (".py", ".yaml", ".yml")


class FlagGemsSealing:
    """Mixed into the FlagGems provider (it supplies ``_root`` and ``gems_package_of``)."""

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
        from zl_flaggems.provider import provider_commit

        root = self._root(source)
        return provider_commit(root) if root is not None else None

    def source_changes(self, source: str | None) -> list[str]:
        """Tracked files changed and not committed (``git status``), which a commit
        cannot vouch for; [] where the checkout is not a git work tree."""
        root, git = self._root(source), shutil.which("git")
        if root is None or git is None or not (root / ".git").exists():
            return []
        try:
            proc = subprocess.run([git, "-C", str(root), "status", "--porcelain",
                                   "--untracked-files=no"], capture_output=True, text=True,
                                  timeout=30, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.SubprocessError):
            return []
        return [line[3:] for line in proc.stdout.splitlines() if len(line) > 3] if proc.returncode == 0 else []

    def frozen_imports(self, *, python: str, source: str | None) -> dict[str, str | None]:
        root = self._root(source)
        if root is None:
            return origins(python, ["triton"])
        from zl_flaggems.provider import cell_pythonpath

        path = cell_pythonpath(root, os.environ.get("PYTHONPATH", ""))
        return origins(python, ["triton", self.gems_package_of(root)],
                       env={**os.environ, "PYTHONPATH": path}, cwd=str(root))
