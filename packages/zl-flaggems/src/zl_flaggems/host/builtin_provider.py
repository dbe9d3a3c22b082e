"""The built-in suite provider: zl's own Triton operators under FlagGems' protocol.

Device cells run ``python -m pytest ... benchmark/test_<op>.py::test_<op>`` from
the suite folder shipped in this package (the folder of this module), with the
same zl pytest plugins as FlagGems cells. Compile-only cells run
``python -m zl_flaggems.cell.compile_only --op <op> --target <target>``, which needs
neither a device nor torch.

The suite is installed inside site-packages, so its cells are isolated from the
user's pytest configuration (``-c`` our ``pytest.ini``, ``--rootdir``, an empty
``PYTEST_ADDOPTS``) and write no bytecode or cache next to it.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from zl_core.foundation.compiler_env import CompilerEnv
from zl_core.foundation.errors import PreflightError
from zl_core.interface import contract
from zl_core.interface.provider import CellCommand, CellRequest, CheckSpec, OpInfo, Provider, WarmPlan
from zl_core.plugins.host import PluginHost

from zl_flaggems.common import gems_env, plugin_order
from zl_flaggems.host import preflight
from zl_flaggems.host.compiler_vars import COMPILER_ENV
from zl_flaggems.host.picks import RecordedPicks
from zl_flaggems.host.preflight import BENCH_DIR
from zl_flaggems.host.table import PrintedTableRows

SUITE_DIR = Path(__file__).resolve().parents[1] / "builtin"
INI_NAME = "pytest.ini"

# Runs in the cell's interpreter: can it import what the cell needs?
_PROBE = """\
import importlib, importlib.util, json, sys
out = {"python": sys.executable, "missing": [], "errors": {}}
for name in sys.argv[1:]:
    try:
        if name.startswith("?"):
            if importlib.util.find_spec(name[1:]) is None:
                out["missing"].append(name[1:])
        else:
            mod = importlib.import_module(name)
            out[name] = getattr(mod, "__version__", None)
    except Exception as exc:
        out["missing"].append(name.lstrip("?"))
        out["errors"][name.lstrip("?")] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0]
print("ZL_PROBE " + json.dumps(out))
"""


def package_version() -> str:
    """The zl-flaggems version: the suite's 'commit' is the package that ships it."""
    try:
        import importlib.metadata as md

        return md.version("zl-flaggems")
    except md.PackageNotFoundError:  # not installed as a distribution (PYTHONPATH checkout)
        from zl_flaggems import __version__

        return __version__


def _literal(tree: ast.Module, name: str) -> tuple[str, ...]:
    """A module-level ``NAME = ("a", "b")`` of a benchmark file, without importing it."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return ()
            return tuple(str(v) for v in value) if isinstance(value, (tuple, list)) else ()
    return ()


def _op_marks(func: ast.FunctionDef) -> list[str]:
    """Names of ``@pytest.mark.<name>`` decorators."""
    marks = []
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)
                and target.value.attr == "mark"):
            marks.append(target.attr)
    return marks


def read_benchmark_file(path: Path) -> list[OpInfo]:
    """The operators of one ``test_<file>.py``: each ``def test_<op>`` marked ``<op>``."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    dtypes, kinds = _literal(tree, "DTYPES"), _literal(tree, "KINDS")
    op_file = path.stem[len("test_"):]
    ops = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            op = node.name[len("test_"):]
            if op in _op_marks(node):
                ops.append(OpInfo(op=op, op_file=op_file, dtypes=dtypes, kinds=kinds))
    return ops


def _grammars(request: CellRequest) -> list | None:
    """The request's backend when it declares its targets, else None (the installed ones)."""
    return [request.backend] if request.backend.compile_targets is not None else None


class BuiltinSuiteProvider(PrintedTableRows, RecordedPicks, Provider):
    """zl's own Triton operators (mm, mm_f32, softmax, layer_norm, add, sum, gelu)."""

    name = "builtin"
    description = "zl's built-in Triton operators, FlagGems benchmark protocol (no checkout needed)"
    supports_compile_only = True
    interpreter_timeout_s = 300.0

    def __init__(self) -> None:
        self._probe_cache: dict[tuple, dict] = {}

    # -- where the suite is ----------------------------------------------------------

    def root(self, source: str | None) -> Path:
        """The suite folder (parent of ``benchmark/``): ``source`` or the packaged one."""
        return Path(source).expanduser().resolve() if source else SUITE_DIR

    def list_ops(self, source: str | None) -> list[OpInfo]:
        bench = self.root(source) / BENCH_DIR
        if not bench.is_dir():
            return []
        ops = [op for path in sorted(bench.glob("test_*.py")) for op in read_benchmark_file(path)]
        return sorted(ops, key=lambda o: (o.op, o.op_file))

    supports_checks = True

    def default_check(self, op: OpInfo, source: str | None) -> CheckSpec | None:
        """The benchmark itself, every shape checked against torch and nothing timed."""
        node = f"{BENCH_DIR}/test_{op.op_file}.py"
        if not (self.root(source) / node).is_file():
            return None
        return CheckSpec(file=node,
                         select=(f"{node}::test_{op.op}",))

    def workload_files(self, op: OpInfo, source: str | None) -> list[Path]:
        """The operator's benchmark file, the suite's harness and the operator's kernels."""
        root = self.root(source)
        bench = root / BENCH_DIR
        harness = [p for p in sorted(bench.glob("*")) if p.is_file() and p.suffix in (".py", ".yaml")
                   and not p.name.startswith("test_")]
        kernels = root / "kernels"
        return [bench / f"test_{op.op_file}.py", *harness,
                *(p for p in (kernels / "_spec.py", kernels / f"{op.op_file}.py") if p.is_file())]

    # -- preflight ---------------------------------------------------------------------

    def preflight(self, request: CellRequest, host: PluginHost | None = None) -> None:
        root = self._check_suite(request.source)
        preflight.check_level(request)
        path, func = self._node_parts(request, root)
        self._check_function(path, func, request)
        if request.compile_only:
            self._check_compile_only(request)
        else:
            preflight.check_shape_file(self._shape_file(request))
            preflight.check_replay(request, "autotune_records/")
        self._check_interpreter(request, host)

    def check_source(self, source: str | None) -> None:
        self._check_suite(source)

    def _check_suite(self, source: str | None) -> Path:
        root = self.root(source)
        missing = [n for n in (BENCH_DIR, INI_NAME) if not (root / n).exists()]
        if missing:
            raise PreflightError("suite_dir", f"{root} is not a built-in suite folder (missing "
                                 f"{' and '.join(missing)}); drop --source or reinstall zl-flaggems")
        return root

    def _node(self, request: CellRequest) -> str:
        return preflight.default_node(request)

    def _node_parts(self, request: CellRequest, root: Path) -> tuple[Path, str]:
        def known_ops() -> str:
            known = ", ".join(o.op for o in self.list_ops(str(root) if root != SUITE_DIR else None))
            return f"; built-in operators: {known}"

        return preflight.node_parts(self._node(request), root, known_ops)

    def _check_function(self, path: Path, func: str, request: CellRequest) -> None:
        if not func:
            return
        names = [f"test_{o.op}" for o in read_benchmark_file(path)]
        if func not in names:
            found = ", ".join(names) or "none"
            raise PreflightError("test_function", f"no 'def {func}' marked as its operator in "
                                 f"{path} (found: {found})")

    def _check_compile_only(self, request: CellRequest) -> None:
        from zl_flaggems.builtin.kernels import OPS
        from zl_flaggems.common.compile_targets import CompileOnlyError, parse_target

        if request.op.op not in OPS:
            raise PreflightError("compile_specs", f"operator {request.op.op!r} has no compile specs; "
                                 f"compile-only operators: {', '.join(OPS)}")
        try:
            parse_target(self._target(request), _grammars(request))
        except CompileOnlyError as exc:
            raise PreflightError("target", str(exc)) from None
        if request.shape_file is not None and request.shapes != "upstream":
            raise PreflightError("shape_file", "compile-only cells compile the suite's fixed "
                                 "COMPILE_SPECS and take no shape file; drop --shape-file")
        if request.replay_from is not None:
            raise PreflightError("replay_dir", "compile-only cells autotune nothing (every config "
                                 "is compiled); drop --replay-from")

    def _shape_file(self, request: CellRequest) -> Path | None:
        if request.shapes == "upstream" or request.shape_file is None:
            return None
        return Path(request.shape_file).expanduser().resolve()

    def _check_interpreter(self, request: CellRequest, host: PluginHost | None = None) -> dict:
        """Can the cell's python import what the cell imports? Names the python if not."""
        python = request.python
        shown = preflight.shown_python(python)
        if request.compile_only:
            needs, wanted = ["?triton", "?zl_flaggems.cell.compile_only", "?zl_core"], "triton"
        else:
            modules = self._plan(request, host).modules
            # Found, not imported: importing torch costs seconds per campaign.
            needs = ["?triton", "?torch", *(f"?{m}" for m in modules)]
            wanted = "triton + torch"
        env = {**os.environ, **request.env}
        key = (python, env.get("PYTHONPATH"), tuple(needs))
        if key in self._probe_cache:
            return self._probe_cache[key]
        cwd = str(request.out_dir) if Path(request.out_dir).is_dir() else None
        probe = preflight.run_probe(
            [python, "-c", _PROBE, *needs], cwd=cwd, env=env,
            timeout_s=self.interpreter_timeout_s, shown=shown, needs=wanted,
            timed_out=f"{shown} did not finish importing {wanted} within "
                      f"{self.interpreter_timeout_s:.0f}s",
            failed=f"{shown} cannot run the import probe")
        if probe.get("missing"):
            detail = "; ".join(f"{m} ({probe['errors'][m]})" if m in probe.get("errors", {}) else m
                               for m in probe["missing"])
            raise PreflightError("interpreter", f"{shown} cannot import {detail}; the built-in "
                                 f"suite needs {wanted} and zl-flaggems in that interpreter")
        self._probe_cache[key] = probe
        return probe

    # -- the command ---------------------------------------------------------------------

    def _target(self, request: CellRequest) -> str:
        """The compile-only target: the request's, else the backend's default."""
        from zl_flaggems.common.compile_targets import default_target

        return request.target or default_target(_grammars(request))

    def _plan(self, request: CellRequest, host: PluginHost | None):
        return plugin_order.plan_cell(request, host)

    def _shape_mode(self, request: CellRequest) -> str:
        path = self._shape_file(request)
        return f"file:{path}" if path is not None and not request.compile_only else "builtin"

    def warm_plan(self, request: CellRequest) -> WarmPlan:
        return gems_env.warm_plan()

    def cell_command(self, request: CellRequest, host: PluginHost | None = None) -> CellCommand:
        root = self.root(request.source)
        # The suite runs under FlagGems' protocol, so FlagGems' vendor and tuner-cache
        # rules apply to its cells as well.
        environ = {**os.environ, **request.env}
        tuner_env, unset, tuner = gems_env.tuner_cache(request.isolate_tuner_cache,
                                                       request.out_dir, environ)
        gems = {**gems_env.vendor_env(request.backend, environ), **tuner_env}
        identity: dict[str, object] = {
            "provider": self.name,
            "provider_commit": package_version(),
            "tuner_cache": tuner,
            "shape_mode": self._shape_mode(request),
            "bench_level": request.level,
            "suite_dir": str(root),
        }
        if request.check is not None:
            # The suite's own check: every shape against torch, nothing timed (--metrics accuracy);
            # with the plugins FlagGems' checks get (plugin_order.CHECK_PLUGINS says why).
            argv = [request.python, "-m", "pytest", "-p", "no:cacheprovider",
                    *plugin_order.pytest_args(plugin_order.CHECK_PLUGINS), "-q",
                    "-c", str(root / INI_NAME), "--rootdir", str(root), *request.check.select,
                    "--level", request.level, "--metrics", "accuracy",
                    f"--junitxml={Path(request.out_dir) / contract.ACCURACY_REPORT}"]
            for dtype in request.op.dtypes:
                argv += ["--dtypes", dtype]
            identity.update({"timer": "none", "check": request.check.to_json(),
                             "plugins": list(plugin_order.CHECK_PLUGINS)})
            return CellCommand(argv=tuple(argv), cwd=root, env={contract.PROVIDER: self.name, **gems},
                               unset=unset, identity=identity)
        if request.compile_only:
            target = self._target(request)
            argv = [request.python, "-m", "zl_flaggems.cell.compile_only", "--op", request.op.op,
                    "--target", target]
            if request.op.dtypes:
                argv += ["--dtypes", ",".join(request.op.dtypes)]
            identity.update({"timer": "none", "compile_only": True, "target": target})
            return CellCommand(argv=tuple(argv), cwd=Path(request.out_dir),
                               env={contract.PROVIDER: self.name, **gems},
                               unset=unset, identity=identity)

        plan = self._plan(request, host)
        node = self._node(request)
        argv = [request.python, "-m", "pytest", "-p", "no:cacheprovider",
                "-c", str(root / INI_NAME), "--rootdir", str(root), "-s",
                *plugin_order.pytest_args(plan.modules),
                node, "--level", request.level, "--mode", "kernel"]
        for dtype in request.op.dtypes:
            argv += ["--dtypes", dtype]
        shape_file = self._shape_file(request)
        if shape_file is not None:
            argv += ["--shape_file", str(shape_file)]
        identity.update({"timer": plan.timer, "test_node": node, "plugins": list(plan.modules)})
        if plan.notes:
            identity["plan_notes"] = list(plan.notes)
        env = {
            contract.PROVIDER: self.name,
            contract.SHAPE_MODE: self._shape_mode(request),
            contract.SHAPE_FILE: str(shape_file) if shape_file else "",
            **gems,
            # The suite sits in site-packages: no bytecode there, and no user addopts.
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_ADDOPTS": "",
        }
        return CellCommand(argv=tuple(argv), cwd=root, env=env,
                           unset=unset, identity=identity)

    def compiler_env(self) -> CompilerEnv:
        """Triton's (or FlagTree's) variables and FlagGems' (:mod:`.compiler_vars`)."""
        return COMPILER_ENV

    # -- switch check ------------------------------------------------------------------

    def switch_report(self, *, python, names, a_values, b_values, target=None):
        """Asked in the cells' interpreter: its Triton (or FlagTree) compiles the cells."""
        from zl_flaggems.host.switch_probe import ask_triton

        return ask_triton(python, names, a_values, b_values, target=target)
