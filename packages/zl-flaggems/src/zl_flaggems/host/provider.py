"""The FlagGems provider: benchmark cells run from a FlagGems checkout.

A cell is ``<python> -m pytest ... benchmark/test_<op_file>.py::test_<op>`` run
in the checkout with zl's pytest plugins loaded by ``-p``. Everything is passed
as argv lists; an operator name never reaches a shell.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from pathlib import Path

from zl_core.foundation.compiler_env import CompilerEnv
from zl_core.foundation.errors import PreflightError
from zl_core.interface import contract
from zl_core.interface.provider import CellCommand, CellRequest, OpInfo, Provider, ShardMerge, WarmPlan
from zl_core.interface.rows import LOG_NAME
from zl_core.plugins.host import PluginHost

from zl_flaggems.common import gems_env, plugin_order
from zl_flaggems.common.gems_env import GEMS_PACKAGE_ENV
from zl_flaggems.host import bench_dtypes, preflight
from zl_flaggems.host.checkout import PACKAGES, cell_pythonpath, gems_package, provider_commit
from zl_flaggems.host.compiler_vars import COMPILER_ENV
from zl_flaggems.host.inventory import Inventory, bench_functions, benchmark_files
from zl_flaggems.host.picks import RecordedPicks
from zl_flaggems.host.preflight import BENCH_DIR
from zl_flaggems.host.sealing import FlagGemsSealing
from zl_flaggems.host.table import PrintedTableRows

# Runs inside the candidate interpreter: can it find what a cell imports? Finding, not
# importing: importing torch + flag_gems costs seconds per campaign, which is most of
# the harness's budget against a bare run (docs/validation); a broken install that is
# found but fails to import shows in the cell's run.log instead.
_PROBE = """\
import importlib.util, json, sys
out = {"python": sys.executable, "missing": [], "errors": {}}
for name in sys.argv[1:]:
    try:
        if importlib.util.find_spec(name) is None:
            out["missing"].append(name)
    except Exception as exc:  # a parent package that fails to import: kept with its reason
        out["missing"].append(name)
        out["errors"][name] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:200]
print("ZL_PROBE " + json.dumps(out))
"""
_CORE_MODULES = ("torch", "triton")


class FlagGemsProvider(FlagGemsSealing, PrintedTableRows, RecordedPicks, Provider):
    """Cells from a FlagGems checkout (``--flaggems-dir`` / ``FLAGGEMS_DIR``)."""

    name = "flaggems"
    source_env = "FLAGGEMS_DIR"
    description = "FlagGems benchmark suite from a checkout (benchmark/test_*.py)"
    interpreter_timeout_s = 300.0
    commit_timeout_s = 10.0
    #: The shapes plugin slices every benchmark's settled shapes (ZL_SWEEP_SHARD).
    supports_sweep_shards = True

    def __init__(self) -> None:
        self._probe_cache: dict[tuple, dict] = {}
        self._inventory = Inventory()

    # -- listing ---------------------------------------------------------------

    def list_ops(self, source: str | None) -> list[OpInfo]:
        root = self._root(source)
        return [] if root is None else self._inventory.ops(root)

    def dtype_choices(self, source: str | None) -> tuple[str, ...]:
        """``choices`` of ``--dtypes`` in the checkout's benchmark/conftest.py."""
        root = self._root(source)
        return () if root is None else self._inventory.dtype_choices(root)

    def rejected_dtypes(self, cell_dir: Path) -> bool:
        """The cell's run.log holds FlagGems' own refusal of a dtype filter
        (``Benchmark.set_dtypes``: "Given dtype(s) ... can't be supported by this op")."""
        try:
            text = (Path(cell_dir) / LOG_NAME).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return bool(bench_dtypes.rejected(text))

    # -- preflight -------------------------------------------------------------

    def preflight(self, request: CellRequest, host: PluginHost | None = None) -> None:
        root = self._check_dir(request.source)
        if request.compile_only:
            raise PreflightError("compile_only", "FlagGems benchmarks need a device; "
                                 "use --suite builtin for compile-only cells")
        if request.check is not None:  # accuracy tests, not the benchmark (zl_flaggems.host.sealing)
            self.check_tests_exist(request.check, root)
            self._check_interpreter(request, root, host)
            return
        preflight.check_level(request)
        node_file, node_func = self._node_parts(request, root)
        self._check_function(root, node_file, node_func, request)
        preflight.check_shape_file(self._shape_file(request))
        preflight.check_replay(request, "autotune_records/meta.json")
        self._check_interpreter(request, root, host)

    def _root(self, source: str | None) -> Path | None:
        value = source or os.environ.get(self.source_env, "").strip()
        return Path(value).expanduser() if value else None

    def check_source(self, source: str | None) -> None:
        self._check_dir(source)

    @staticmethod
    def gems_package_of(root: Path) -> str:
        return gems_package(root)

    def source_name(self, source: str) -> str | None:
        """A further checkout is named by its package: ``vllm`` for FlagGems-vllm."""
        root = Path(source)
        found = [name for name in PACKAGES if (root / "src" / name).is_dir()]
        return PACKAGES[found[0]] if len(found) == 1 else None

    def _check_dir(self, source: str | None) -> Path:
        root = self._root(source)
        hint = "pass --flaggems-dir <clone of flagos-ai/FlagGems>"
        if root is None:
            raise PreflightError("flaggems_dir", "no FlagGems checkout given; pass --flaggems-dir "
                                 "or set FLAGGEMS_DIR to a FlagGems clone")
        if root.is_file():
            raise PreflightError("flaggems_dir", f"{root} is a file, not a FlagGems checkout; {hint}")
        if not root.is_dir():
            raise PreflightError("flaggems_dir", f"FlagGems directory does not exist: {root}; {hint}")
        missing = [] if (root / BENCH_DIR).is_dir() else [str(BENCH_DIR)]
        if not (root / "src" / gems_package(root)).is_dir():  # neither package is there
            missing.append(" or ".join(f"src/{name}" for name in PACKAGES))
        if missing:
            try:
                empty = "" if any(root.iterdir()) else "an empty folder, "
            except OSError:
                empty = ""
            raise PreflightError("flaggems_dir", f"{root} is {empty}not a FlagGems checkout (missing "
                                 f"{' and '.join(missing)}); point --flaggems-dir at the repository root")
        return root.resolve()

    def _node(self, request: CellRequest) -> str:
        return preflight.default_node(request)

    def _node_parts(self, request: CellRequest, root: Path) -> tuple[Path, str]:
        """The node's file (checked to exist) and its function name (may be empty)."""

        def close_files() -> str:
            if request.test_node:
                return ""
            stems = [p.stem[len("test_"):] for p in benchmark_files(root)]
            close = difflib.get_close_matches(request.op.op_file, stems, n=3, cutoff=0.6)
            return f"; close op files: {', '.join(close)} (spec op:op_file)" if close else ""

        return preflight.node_parts(self._node(request), root, close_files)

    def _check_function(self, root: Path, path: Path, func: str, request: CellRequest) -> None:
        if not func:
            return
        names = bench_functions(path)
        if not func.startswith("test_"):
            return  # a class or an unusual node: pytest reports it precisely
        wanted = func[len("test_"):]
        if wanted in names:
            return
        hints = []
        close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.5)
        if close:
            hints.append("close names in this file: " + ", ".join(close))
        elsewhere = [p.stem[len("test_"):] for p in benchmark_files(root)
                     if p != path and wanted in bench_functions(p)]
        if elsewhere:
            hints.append(f"test_{wanted} is defined in " + ", ".join(
                f"test_{f}.py (spec {wanted}:{f})" for f in elsewhere[:3]))
        hint = "; " + "; ".join(hints) if hints else ""
        raise PreflightError("test_function", f"no 'def test_{wanted}' in {path}{hint}")

    def _shape_file(self, request: CellRequest) -> Path | None:
        if request.shapes == "upstream" or request.shape_file is None:
            return None
        return Path(request.shape_file)

    # -- interpreter -------------------------------------------------------------

    def cell_env(self, request: CellRequest, root: Path) -> dict[str, str]:
        """Variables this provider adds to the cell: its import path, its share of the
        ``ZL_*`` contract, FlagGems' vendor and tuner cache (core adds its own share)."""
        existing = request.env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        shape_file = self._shape_file(request)
        environ = {**os.environ, **request.env}
        env = {
            "PYTHONPATH": cell_pythonpath(root, existing),
            contract.PROVIDER: self.name,
            GEMS_PACKAGE_ENV: gems_package(root),
            contract.SHAPE_MODE: self._shape_mode(request),
            # Empty means "FlagGems' own shapes" to the shapes plugin, even if a
            # shape file was given alongside --shapes upstream.
            contract.SHAPE_FILE: str(shape_file.resolve()) if shape_file else "",
            **gems_env.vendor_env(request.backend, environ),
        }
        env.update(gems_env.tuner_cache(request.isolate_tuner_cache, request.out_dir, environ)[0])
        return env

    def _check_interpreter(self, request: CellRequest, root: Path,
                           host: PluginHost | None = None) -> dict:
        python = request.python
        shown = preflight.shown_python(python)
        modules = list(self._plan(request, host).modules)
        environ = {**os.environ, **request.env}
        env = {**environ, **gems_env.vendor_env(request.backend, environ),
               "PYTHONPATH": self.cell_env(request, root)["PYTHONPATH"]}
        package = gems_package(root)
        core_modules = (*_CORE_MODULES, package)
        key = (python, str(root), env.get("PYTHONPATH"), gems_env.vendor(request.backend, env),
               tuple(modules))
        if key in self._probe_cache:
            return self._probe_cache[key]
        probe = preflight.run_probe(
            [python, "-c", _PROBE, *core_modules, *modules], cwd=str(root), env=env,
            timeout_s=self.interpreter_timeout_s, shown=shown,
            needs=f"torch, triton and {package}",
            timed_out=f"{shown} did not finish looking up torch, triton and {package} within "
                      f"{self.interpreter_timeout_s:.0f}s (cwd {root})",
            failed=f"{shown} cannot run the import probe")
        errors = probe.get("errors") or {}

        def named(modules: list[str]) -> list[str]:
            return [f"{m} ({errors[m]})" if m in errors else m for m in modules]

        core = [m for m in probe.get("missing", []) if m in core_modules]
        if core:
            raise PreflightError("interpreter", f"{shown} cannot import {' + '.join(named(core))} "
                                 f"(PYTHONPATH includes {root / 'src'}); pass --python "
                                 "<interpreter with torch and triton>")
        if probe.get("missing"):
            raise PreflightError("interpreter", f"{shown} finds torch, triton and {package} but not "
                                 f"zl's cell plugins ({', '.join(named(probe['missing']))}); pip install "
                                 "zl-flaggems into that interpreter")
        self._probe_cache[key] = probe
        return probe

    # -- the command ---------------------------------------------------------------

    def _plan(self, request: CellRequest, host: PluginHost | None) -> plugin_order.PluginPlan:
        return plugin_order.plan_cell(request, host)

    def _shape_mode(self, request: CellRequest) -> str:
        path = self._shape_file(request)
        return f"file:{path.resolve()}" if path is not None else "upstream"

    def _mode_flag(self, request: CellRequest) -> str:
        # FlagGems' conftest renames --mode on kunlunxin (it clashes with a plugin there).
        vendor = gems_env.vendor(request.backend, {**os.environ, **request.env})
        return "--fg_mode" if vendor == "kunlunxin" else "--mode"

    def merge_sweep_shards(self, shard_cells: Sequence[Path], into: Path) -> ShardMerge:
        from zl_flaggems.host.sweep_merge import merge_shards

        return merge_shards(shard_cells, into)

    def warm_plan(self, request: CellRequest) -> WarmPlan:
        return gems_env.warm_plan()

    def cell_command(self, request: CellRequest, host: PluginHost | None = None) -> CellCommand:
        root = self._root(request.source)
        if root is None:
            raise PreflightError("flaggems_dir", "no FlagGems checkout given; pass --flaggems-dir "
                                 "or set FLAGGEMS_DIR")
        root = root.resolve()
        if request.check is not None:
            return self.check_command(request, root, host)
        plan = self._plan(request, host)
        argv = [request.python, "-m", "pytest", "-p", "no:cacheprovider", "-s",
                *plugin_order.pytest_args(plan.modules),
                self._node(request),
                "--level", request.level,
                self._mode_flag(request), "kernel"]
        for dtype in request.op.dtypes:
            argv += ["--dtypes", dtype]
        if request.timing == "operator":
            # FlagGems' own switch: latency_base (torch's reference) and speedup are not timed.
            argv += ["--metrics", "latency"]
        _, unset, tuner = gems_env.tuner_cache(request.isolate_tuner_cache, request.out_dir,
                                               {**os.environ, **request.env})
        identity: dict[str, object] = {
            "provider": self.name,
            "provider_commit": provider_commit(root),
            "source": str(root),
            "gems_package": gems_package(root),
            "tuner_cache": tuner,
            "shape_mode": self._shape_mode(request),
            "bench_level": request.level,
            "timer": plan.timer,
            "test_node": self._node(request),
            "plugins": list(plan.modules),
        }
        if plan.notes:
            identity["plan_notes"] = list(plan.notes)
        return CellCommand(argv=tuple(argv), cwd=root, env=self.cell_env(request, root),
                           unset=unset, identity=identity)

    def compiler_env(self) -> CompilerEnv:
        """Triton's (or FlagTree's) variables and FlagGems' (:mod:`.compiler_vars`)."""
        return COMPILER_ENV

    # -- switch check ------------------------------------------------------------------

    def switch_report(self, *, python, names, a_values, b_values, target=None):
        """Asked in the cells' interpreter: its Triton (or FlagTree) compiles the cells."""
        from zl_flaggems.host.switch_probe import ask_triton

        return ask_triton(python, names, a_values, b_values, target=target)
