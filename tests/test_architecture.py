"""The layering docs/architecture.md states, checked on the source of zl_core, and
zl_flaggems' two sides: what runs in the orchestrator and what runs in a cell."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import zl_core
import zl_flaggems
import zl_report

ROOT = Path(zl_core.__file__).parent
COMMANDS_PKG = "zl_core.cli"


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level) for every import of ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rsplit(".", 1)[0]
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, id(node) in top))
            found += [(f"{base}.{alias.name}", id(node) in top) for alias in node.names]
    return found


MODULES = {_module_name(p): _imports(p) for p in sorted(ROOT.rglob("*.py"))}


def _importers(prefix: str) -> set[str]:
    return {mod for mod, imports in MODULES.items()
            if not mod.startswith(prefix) and any(i == prefix or i.startswith(prefix + ".") for i, _ in imports)}


def test_the_core_imports_no_vendor_or_provider_package():
    for mod, imports in MODULES.items():
        bad = [i for i, _ in imports if i.startswith(("zl_flaggems", "zl_backend_"))]
        assert not bad, f"{mod} imports {bad}"
        eager = [i for i, top in imports if i.startswith("zl_report") and top]
        assert not eager, f"{mod} imports the optional zl_report at import time"


def test_only_the_command_line_imports_the_command_line():
    assert {m for m in _importers(COMMANDS_PKG) if m != "zl_core.__main__"} == set()


def test_command_modules_do_not_import_each_other():
    # zl_core.cli._common, _config, _logs, _shells: helpers the commands share, never a command
    inside = {m for m in MODULES if m.startswith(COMMANDS_PKG + ".")}
    commands = {m for m in inside if not m.rsplit(".", 1)[1].startswith("_")}
    for mod in inside:
        other = {i for i, _ in MODULES[mod] if i in commands and i != mod}
        assert not other, f"{mod} imports the command module(s) {other}; share through zl_core.app"


def test_only_the_command_line_calls_the_application_layer():
    assert _importers("zl_core.app") <= {m for m in MODULES if m.startswith(COMMANDS_PKG)}


def test_reports_read_campaigns_without_running_them():
    running = ("zl_core.campaigns.executor", "zl_core.campaigns.screen_task",
               "zl_core.campaigns.ab_task", "zl_core.cells.cell")
    for mod, imports in MODULES.items():
        if mod.startswith("zl_core.report"):
            assert not [i for i, _ in imports
                        if i in running or i.startswith(tuple(r + "." for r in running))], mod


def test_statistics_have_two_callers_through_one_adapter():
    # the adaptive loop and the rounds report, each through campaigns.judging
    assert _importers("zl_core.stats") == {"zl_core.campaigns.ab_task", "zl_core.campaigns.judging",
                                           "zl_core.report.rounds_report"}
    assert _importers("zl_core.campaigns.judging") >= {"zl_core.campaigns.ab_task",
                                                      "zl_core.report.rounds_report"}


def test_the_round_folder_is_spelled_in_the_layout_only():
    spelled = [p.relative_to(ROOT) for p in ROOT.rglob("*.py")
               if ":02d}" in p.read_text(encoding="utf-8") and p.name != "layout.py"]
    assert spelled == []


STORE = "zl_core.store"
#: What the store may import of zl_core: it is below everything that reads or runs campaigns.
STORE_BASE = ("zl_core.foundation.atomic", "zl_core.foundation.errors", "zl_core.foundation.small_files", "zl_core.foundation.stamps", "zl_core.foundation.backend",  # the foundation
              "zl_core.interface.caliber", "zl_core.interface.contract", "zl_core.interface.rows", "zl_core.interface.ttgir_layout")  # the cell contract


def test_the_store_imports_nothing_above_it():
    for mod, imports in MODULES.items():
        if mod == STORE or mod.startswith(STORE + "."):
            above = [i for i, _ in imports if i.startswith("zl_core") and i != "zl_core"
                     and not i.startswith((STORE, *STORE_BASE))]
            assert not above, f"{mod} imports {above}"


def test_readers_of_the_run_folder_read_it_through_the_store_not_the_engine():
    # The report, the IR readers, series and status take files and records from
    # zl_core.store; of the engine they may use only campaigns.judging (the statistics'
    # input, which the rounds report shares with the adaptive stop).
    readers = ("zl_core.report", "zl_core.ir", "zl_core.decisions.series", "zl_core.decisions.status")
    for mod, imports in MODULES.items():
        if mod.startswith(readers):
            engine = [i for i, _ in imports if i.startswith("zl_core.campaigns")
                      and not i.startswith("zl_core.campaigns.judging")]
            assert not engine, f"{mod} imports the engine: {engine}"


def test_the_timestamp_formats_are_written_once():
    """The UTC stamp inside files and the local stamp in folder names: stamps.py alone."""
    for spelling in ("%Y-%m-%dT%H:%M:%S", "%Y%m%d-%H%M%S"):
        spelled = [p.relative_to(ROOT) for p in ROOT.rglob("*.py")
                   if spelling in p.read_text(encoding="utf-8") and p.name != "stamps.py"]
        assert spelled == [], spelling


# -- the layers: zl_core's folders, checked on every runtime import -----------------------

#: zl_core's layers, bottom first, each a folder of the package: a module imports only
#: modules of its own folder and of the folders before it, whether at the top of its file
#: or inside a function (an import under ``if TYPE_CHECKING:`` is for type checkers only).
LAYERS = ("foundation", "interface", "plugins", "cells", "store", "seal", "decisions", "ir",
          "stats", "campaigns", "report", "app", "cli")
#: The two modules at the package's root: ``zl_core`` (the public plugin surface, which
#: re-exports from the foundation and the plugin host) and ``python -m zl_core``.
ROOT_MODULES = {"zl_core": "plugins", "zl_core.__main__": "cli"}
#: Folders that hold no module of a layer (data files the package ships).
DATA_FOLDERS = ("schemas",)
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a ``from ... import`` names, its relative dots resolved in ``package``."""
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(path: Path, root: Path = ROOT, known: dict | None = None) -> set[str]:
    """The modules of ``known`` (default: zl_core's) that ``path`` imports when it runs:
    at module level or inside a function, never under ``if TYPE_CHECKING:``. ``from P
    import name`` imports the module ``P.name`` when there is one, else ``P`` (a
    package's own ``__init__`` runs for any of its modules, which counts as no import of it)."""
    known = MODULES if known is None else known
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _module_name(path, root)
    package = own if path.name == "__init__.py" else own.rsplit(".", 1)[0]
    found: set[str] = set()

    def nearest(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(filter(None, (nearest(alias.name) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            base = _imported_from(node, package)
            for alias in node.names:
                found.update(filter(None, [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known
                                           else nearest(base)]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(own)
    return found


RUNTIME = {_module_name(p): _runtime_imports(p) for p in sorted(ROOT.rglob("*.py"))}


def _layer_of(mod: str) -> int | None:
    """The index of ``mod``'s layer (bottom 0): its folder's, or a root module's own."""
    if mod in ROOT_MODULES:
        return LAYERS.index(ROOT_MODULES[mod])
    folder = mod.split(".")[1] if mod.count(".") >= 1 else ""
    return LAYERS.index(folder) if folder in LAYERS and mod.count(".") >= 2 else None


def test_every_module_lives_in_the_folder_of_its_layer():
    loose = sorted(m for m in MODULES if _layer_of(m) is None
                   and not (m.count(".") == 1 and m.split(".")[1] in LAYERS))  # a layer's __init__
    assert loose == [], f"place these in a layer folder of zl_core ({', '.join(LAYERS)}): {loose}"
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert folders == sorted((*LAYERS, *DATA_FOLDERS)), "a folder of zl_core that is no layer"


def _layer_or_folder(mod: str) -> int:
    found = _layer_of(mod)
    return LAYERS.index(mod.split(".")[1]) if found is None else found


def _upward(runtime: dict[str, set[str]]) -> list[str]:
    return [f"{mod} ({LAYERS[_layer_or_folder(mod)]}) imports {dep} ({LAYERS[_layer_or_folder(dep)]})"
            for mod, deps in runtime.items() for dep in sorted(deps)
            if _layer_or_folder(dep) > _layer_or_folder(mod)]


def test_no_module_imports_a_layer_above_its_own():
    assert _upward(RUNTIME) == []


def test_the_layer_check_fails_on_an_upward_import():
    raised = {**RUNTIME, "zl_core.foundation.errors": RUNTIME["zl_core.foundation.errors"] | {"zl_core.cells.cell"}}
    assert _upward(raised) == ["zl_core.foundation.errors (foundation) imports zl_core.cells.cell (cells)"]


def test_docs_architecture_names_the_layer_folders_in_order():
    """The table under "## Layers" has one row per folder, bottom first, in LAYERS' order."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `zl_core/")]
    named = [re.match(r"\| `zl_core/(\w+)/`", row).group(1) for row in rows]
    assert named == list(LAYERS)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_runtime_import_cycle_spans_several_modules():
    assert _cycles(RUNTIME) == []


#: Every package of the repository but zl_core: a circle of imports is checked across all.
PACKAGE_ROOTS = [p.parent for p in sorted(Path(__file__).resolve().parents[1].glob("packages/*/src/*/__init__.py"))
                 if p.parent.name != "zl_core"]


def test_no_runtime_import_cycle_spans_modules_of_any_package():
    files = {_module_name(p, root): (p, root) for root in [ROOT, *PACKAGE_ROOTS]
             for p in sorted(root.rglob("*.py"))}
    every = {name: _runtime_imports(path, root, known=files) for name, (path, root) in files.items()}
    assert len(PACKAGE_ROOTS) >= 7 and "zl_report.layout" in every and "zl_flaggems.host.provider" in every
    assert _cycles(every) == []


def test_the_checks_see_deferred_imports_and_skip_type_checking_ones():
    # Inside a function counts (it runs); under TYPE_CHECKING does not.
    assert "zl_core.cells.cellguard" in RUNTIME["zl_core.cells.warmstart"]  # module level
    assert "zl_core.cells.zygote" in RUNTIME["zl_core.cells.cellguard"]  # inside _WarmCell
    assert "zl_core.plugins.host" not in RUNTIME["zl_core.interface.provider"]  # TYPE_CHECKING only
    looped = {**RUNTIME, "zl_core.cells.zygote": RUNTIME["zl_core.cells.zygote"] | {"zl_core.cells.cellguard"}}
    assert _cycles(looped) == [["zl_core.cells.cellguard", "zl_core.cells.zygote"]]


# -- every command reaches the engine through zl_core.app ----------------------------------

#: What a module of zl_core.cli may import besides zl_core.app and zl_core.cli, each a
#: helper that decides nothing about a campaign: ``errors`` (the exceptions and exit codes
#: a command prints and returns), ``contract`` (the default values options show in --help),
#: ``console`` (the one colour decision, made from --color/NO_COLOR/FORCE_COLOR) and
#: ``small_files`` (``cli._config_file`` reads the user's configuration file, bounded).
COMMAND_LINE_HELPERS = ("zl_core.foundation.errors", "zl_core.interface.contract", "zl_core.foundation.console",
                        "zl_core.foundation.small_files")


def _below_the_application(mod: str) -> list[str]:
    return sorted(dep for dep in RUNTIME[mod]
                  if not dep.startswith(("zl_core.app", COMMANDS_PKG)) and dep not in COMMAND_LINE_HELPERS)


def test_commands_import_nothing_below_the_application_layer_but_named_helpers():
    below = {mod: _below_the_application(mod) for mod in RUNTIME if mod.startswith(COMMANDS_PKG)}
    assert {mod: deps for mod, deps in below.items() if deps} == {}, (
        "a command decides through zl_core.app, then parses and prints")


def test_the_command_check_sees_an_import_below_the_application():
    RUNTIME["zl_core.cli.ops"] = RUNTIME["zl_core.cli.ops"] | {"zl_core.campaigns.state"}
    try:
        assert _below_the_application("zl_core.cli.ops") == ["zl_core.campaigns.state"]
    finally:
        RUNTIME["zl_core.cli.ops"] = RUNTIME["zl_core.cli.ops"] - {"zl_core.campaigns.state"}


# -- FlagGems is known to zl-flaggems alone -------------------------------------------------

#: What zl_core's code may still spell with "flaggems" in it, none of it FlagGems knowledge:
#: the plugin package's name (as zl_report's: whose files a digest or a log covers, the
#: install hint), ``--flaggems-dir``, the alias ``--source`` keeps for scripts and config
#: files written with it, and ``flaggems_vendor``, the earlier name of the ``Backend``
#: descriptor's neutral ``vendor``, still taken and read so that backends and providers
#: written to it keep working.
FLAGGEMS_SPELLINGS_KEPT = ("zl_flaggems", "zl-flaggems", "--flaggems-dir", "flaggems_vendor")


def _code_words(path: Path):
    """(line, text) of every string and name of ``path``'s code: docstrings and comments
    (which may give FlagGems as an example) are not code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.attr if isinstance(node, ast.Attribute) else node.name
        elif isinstance(node, ast.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.value.lineno, node.arg
        elif isinstance(node, ast.alias):
            yield node.lineno, node.asname or node.name


def _names_flaggems(text: str) -> bool:
    for kept in FLAGGEMS_SPELLINGS_KEPT:
        text = text.replace(kept, "")
    return re.search(r"flag_?gems", text, re.IGNORECASE) is not None


def test_no_zl_core_module_names_flaggems():
    found = [f"{p.relative_to(ROOT)}:{line}: {text[:80]!r}" for p in sorted(ROOT.rglob("*.py"))
             for line, text in _code_words(p) if _names_flaggems(text)]
    assert found == [], "FlagGems knowledge belongs in zl-flaggems (its provider)"


#: A vendor, its devices or its tools spelled in code: that knowledge is its backend's.
VENDOR_WORDS = re.compile(r"\b(cuda|musa|rocm|hip|ascend|npu|nvidia|mthreads|nvml|nvidia-smi|mthreads-gmi|"
                          r"rocm-smi|npu-smi)\b|zl_backend_\w", re.IGNORECASE)


def test_no_zl_core_module_names_a_vendor():
    """A new vendor is a backend package; nothing in zl_core changes for it (its
    documentation may name vendors as examples, its code may not)."""
    found = [f"{p.relative_to(ROOT)}:{line}: {text[:80]!r}" for p in sorted(ROOT.rglob("*.py"))
             for line, text in _code_words(p) if VENDOR_WORDS.search(text)]
    assert found == [], "vendor knowledge belongs in its zl-backend-<vendor> package"


def test_the_flaggems_check_reads_code_and_skips_docstrings_and_comments(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""FlagGems as an example."""\n# FLAGGEMS_DIR, a comment\n'
                      'KEPT = "pip install zl-flaggems"\nif suite == "flaggems":\n    pass\n'
                      'env = FLAGGEMS_DIR\n')
    named = sorted(line for line, text in _code_words(sample) if _names_flaggems(text))
    assert named == [4, 6]


# -- zl-flaggems: the orchestrator's side and the cell's ---------------------------------

FLAGGEMS_ROOT = Path(zl_flaggems.__file__).parent
#: host/: the zl process (providers, preflight, sealing, ...); cell/: the pytest cell
#: process (plugins and what they share, the compile-only runner); common/: what both use;
#: builtin/: the built-in suite's benchmark files and kernels, which run in the cell.
SIDES = ("host", "cell", "common", "builtin")
CELL_SIDE = ("zl_flaggems.cell", "zl_flaggems.builtin")


def _flaggems_module(path: Path) -> str:
    parts = ("zl_flaggems", *path.relative_to(FLAGGEMS_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _flaggems_imports(path: Path, module: str) -> set[str]:
    """Every zl_flaggems module or package ``path`` imports, at module level, inside a
    function or under ``if TYPE_CHECKING:`` alike; ``from P import name`` counts as both
    ``P`` and ``P.name``; relative imports resolved against ``module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "zl_flaggems" or name.startswith("zl_flaggems.")}


FLAGGEMS = {_flaggems_module(p): _flaggems_imports(p, _flaggems_module(p))
            for p in sorted(FLAGGEMS_ROOT.rglob("*.py"))}


def _within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_every_flaggems_module_is_on_one_side():
    assert len(FLAGGEMS) > 40, "zl_flaggems' modules were not found"
    loose = [m for m in FLAGGEMS if m != "zl_flaggems"
             and not _within(m, *(f"zl_flaggems.{side}" for side in SIDES))]
    assert loose == [], f"place these in zl_flaggems.{{{','.join(SIDES)}}}: {loose}"


def _crossings(modules: dict[str, set[str]], side: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{mod} imports {dep}" for mod, deps in modules.items() if _within(mod, *side)
                  for dep in deps if _within(dep, *forbidden))


def test_the_cell_never_imports_the_orchestrator():
    # A cell process loads the plugins and the suite, never the providers behind them.
    assert _crossings(FLAGGEMS, CELL_SIDE, ("zl_flaggems.host",)) == []


def test_the_orchestrator_names_cell_modules_only_as_strings():
    # The host puts cell modules on a command line (-p, -m); importing one would run a
    # cell's code (compile_only starts a clock and arms a stack dump) in the zl process.
    assert _crossings(FLAGGEMS, ("zl_flaggems.host",), ("zl_flaggems.cell",)) == []
    # Of the built-in suite, only its constant list of compile-only operators (kernels'
    # __init__ imports no kernel).
    assert _crossings(FLAGGEMS, ("zl_flaggems.host",), ("zl_flaggems.builtin",)) == [
        "zl_flaggems.host.builtin_provider imports zl_flaggems.builtin.kernels",
        "zl_flaggems.host.builtin_provider imports zl_flaggems.builtin.kernels.OPS"]


def test_what_both_sides_share_imports_neither():
    assert _crossings(FLAGGEMS, ("zl_flaggems.common",), ("zl_flaggems.host", "zl_flaggems.cell")) == []


def test_the_side_checks_see_a_deferred_import(tmp_path):
    sample = tmp_path / "plugin.py"
    sample.write_text("def f():\n    from ...host import provider\n")
    found = _flaggems_imports(sample, "zl_flaggems.cell.plugins.sample")
    assert _crossings({"zl_flaggems.cell.plugins.sample": found}, CELL_SIDE, ("zl_flaggems.host",)) == [
        "zl_flaggems.cell.plugins.sample imports zl_flaggems.host",
        "zl_flaggems.cell.plugins.sample imports zl_flaggems.host.provider"]


def _exists(name: str) -> bool:
    """``name`` is a zl_flaggems module or package, or a name a module of it defines
    (``zl_flaggems.cell.ttgir_recorder.TtgirRecorder``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        path = FLAGGEMS_ROOT.parent.joinpath(*parts[:cut])
        if cut == len(parts) and path.is_dir():
            return True
        if path.with_suffix(".py").is_file():
            if cut == len(parts):
                return True
            text = path.with_suffix(".py").read_text(encoding="utf-8")
            return re.search(rf"^(?:class |def )?{parts[cut]}\b", text, re.MULTILINE) is not None
    return False


def test_every_zl_flaggems_name_spelled_in_its_strings_exists():
    # -p plugin names, python -m targets, sys.modules look-ups and docstring references
    # are strings: a module moved without them would load nothing in the cell.
    stale = []
    for path in sorted(FLAGGEMS_ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                stale += [f"{path.relative_to(FLAGGEMS_ROOT)}:{node.lineno}: {name}"
                          for name in re.findall(r"zl_flaggems(?:\.\w+)*", node.value)
                          if not _exists(name)]
    assert stale == []


def test_the_entry_point_and_the_cell_plugins_are_modules_of_their_side():
    from zl_flaggems.common import plugin_order

    pyproject = (FLAGGEMS_ROOT.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    entry = re.search(r'^flaggems = "([\w.]+)"$', pyproject, re.MULTILINE).group(1)
    assert _within(entry, "zl_flaggems.host") and _exists(entry)
    plugins = [getattr(plugin_order, name) for name in dir(plugin_order)
               if isinstance(getattr(plugin_order, name), str)
               and getattr(plugin_order, name).startswith(plugin_order.PACKAGE + ".")]
    assert len(plugins) == 10 and all(_within(p, "zl_flaggems.cell.plugins") and _exists(p) for p in plugins)

# -- records, not their contents: following the options of zl ab -----------------------

#: The most times the options of one ``zl ab`` may enter a module (docs/architecture.md).
MAX_ENTRIES = 2


def _option_records() -> tuple[type, ...]:
    """The option records of ``zl_core.app.options``: AbOptions and those it nests."""
    import attrs
    from zl_core.app import options

    return tuple(t for t in vars(options).values() if isinstance(t, type) and attrs.has(t)
                 and t.__module__ == options.__name__)


def _carries(value: object, records: tuple[type, ...]) -> bool:
    """An option record, in a tuple, list or dict, or one field deep in another record."""
    import attrs

    if isinstance(value, records):
        return True
    if isinstance(value, tuple | list):
        return any(isinstance(v, records) for v in value)
    if isinstance(value, dict):
        return any(isinstance(v, records) for v in value.values())
    if attrs.has(type(value)):
        return any(isinstance(getattr(value, f.name, None), records) for f in attrs.fields(type(value)))
    return False


@pytest.mark.slow
def test_following_the_options_of_ab_enters_no_module_more_than_twice(fake_host, tmp_path):
    """``app.ab`` run on the fake backend (a screen first, so that it takes its operators)
    under ``sys.setprofile``. Followed: every call into a function of zl_core whose
    arguments carry an option record of ``zl_core.app.options`` (AbOptions, or the Where,
    Measurement, SwitchChoice, Lanes or ConfigUse it holds, a version ``attrs.evolve``
    made of any of them included), directly, in a tuple, list or dict, or as a field of
    a record passed along (``Resolved`` holds the Measurement). attrs' generated methods
    and other libraries' frames are not zl's code and are passed through: a call's caller
    is the nearest frame of zl_core above it. An entry is a followed call whose caller is
    in another module (or outside zl_core, as the test's call of ``app.ab`` is). A
    record's own machinery (``__attrs_post_init__`` as ``attrs.evolve`` makes one, any
    dunder method) is the record being made, not a call it is passed to: not followed."""
    import collections
    import sys

    from zl_core import app

    where = app.Where(suite="fake")
    app.screen(fake_host, app.ScreenOptions(ops=("gemm", "pointwise"), where=where, runs_root=tmp_path))
    options = app.AbOptions(where=where, runs_root=tmp_path, rounds=4, controls=1, telemetry_interval=0)
    records, root = _option_records(), str(ROOT)
    path: list[tuple[str, str, str]] = []  # (module, function, the calling module)

    def ours(frame) -> bool:
        return frame.f_code.co_filename.startswith(root)

    def follow(frame, event, _arg) -> None:
        code = frame.f_code
        if event != "call" or not ours(frame) or code.co_name.startswith("__"):
            return
        count = (code.co_argcount + code.co_kwonlyargcount
                 + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08))  # *args, **kwargs
        if not any(_carries(frame.f_locals.get(n), records) for n in code.co_varnames[:count]):
            return
        caller = frame.f_back
        while caller is not None and not ours(caller):
            caller = caller.f_back
        path.append((frame.f_globals["__name__"], code.co_name,
                     caller.f_globals["__name__"] if caller is not None else "(the test)"))

    sys.setprofile(follow)
    try:
        done = app.ab(fake_host, options)
    finally:
        sys.setprofile(None)
    assert [r.state for r in done.runs] == ["done", "done"]
    entries = collections.Counter(module for module, _, caller in path if caller != module)
    walked = "\n".join(f"{'->' if caller != module else '  '} {module}.{function}"
                       for module, function, caller in path)
    assert path and entries["zl_core.app.commands"] == 1, walked
    over = {module: n for module, n in entries.items() if n > MAX_ENTRIES}
    assert over == {}, f"entered more than {MAX_ENTRIES} times: {over}\n{walked}"


# -- following the options of zl ab the way a reader does: every function they pass through --


def _module_file(mod: str) -> Path | None:
    path = ROOT.joinpath(*mod.split(".")[1:])
    file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return file if file.is_file() else None


def _defined(mod: str) -> dict[str, tuple]:
    """What each top-level name of ``mod`` is: ("module", M), ("function", node) or
    ("from", M, name) for a name imported from zl_core."""
    file = _module_file(mod)
    out: dict[str, tuple] = {}
    if file is None:
        return out
    package = mod if file.name == "__init__.py" else mod.rsplit(".", 1)[0]
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = ("function", node)
        elif isinstance(node, ast.ImportFrom):
            base = _imported_from(node, package)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out[alias.asname or alias.name] = (("module", full) if _module_file(full)
                                                   else ("from", base, alias.name))
        elif isinstance(node, ast.Import):
            out.update({alias.asname: ("module", alias.name) for alias in node.names if alias.asname})
    return out


def _function(mod: str, name: str, hops: int = 0) -> tuple[str, ast.FunctionDef] | None:
    """(module, definition) of the zl_core function ``name`` of ``mod`` names, if any."""
    found = _defined(mod).get(name) if mod.startswith("zl_core") else None
    if found is None or hops > 5:
        return None
    if found[0] == "function":
        return mod, found[1]
    return _function(found[1], found[2], hops + 1) if found[0] == "from" else None


def _callee(mod: str, func: ast.expr) -> tuple[str, ast.FunctionDef] | None:
    if isinstance(func, ast.Name):
        return _function(mod, func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        found = _defined(mod).get(func.value.id)
        if found is not None and found[0] == "module":
            return _function(found[1], func.attr)
    return None


def _rooted_in(expr: ast.expr, names: set[str]) -> bool:
    """``expr`` is one of ``names`` or an attribute of one (``options.measure.python``),
    or, assigned, a choice between such values or an ``attrs.evolve`` of one."""
    if isinstance(expr, ast.IfExp):
        return _rooted_in(expr.body, names) or _rooted_in(expr.orelse, names)
    if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "evolve"
            and expr.args):
        return _rooted_in(expr.args[0], names)
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id in names


def follow_value(mod: str, function: str, names: set[str]) -> list[tuple[str, str, str]]:
    """Every function of zl_core the value named ``names`` in ``mod.function`` passes
    through, read from the source as a reader follows it: a call is followed where one of
    its arguments is the value, a name bound to it (or to an attribute of it, or to a new
    version of it), or an attribute of it; in the function called, the parameters that
    took it carry it on. (module, function, calling module) in the order met."""
    path: list[tuple[str, str, str]] = []
    seen: set[tuple] = set()

    def walk(mod: str, node: ast.FunctionDef, carried: set[str], caller: str) -> None:
        path.append((mod, node.name, caller))
        if (mod, node.name, frozenset(carried)) in seen:
            return
        seen.add((mod, node.name, frozenset(carried)))
        carried = set(carried)
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.Assign) and _rooted_in(stmt.value, carried):
                carried |= {n.id for target in stmt.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
            found = _callee(mod, call.func)
            if found is None:
                continue
            params = [a.arg for a in (*found[1].args.posonlyargs, *found[1].args.args)]
            took = {params[i] for i, arg in enumerate(call.args) if i < len(params) and _rooted_in(arg, carried)
                    and not isinstance(arg, ast.Starred)}
            took |= {kw.arg for kw in call.keywords if kw.arg and _rooted_in(kw.value, carried)}
            if took:
                walk(found[0], found[1], took, mod)

    start = _function(mod, function)
    assert start is not None, f"{mod}.{function} not found"
    walk(start[0], start[1], names, "(the command)")
    return path


def _entries(path: list[tuple[str, str, str]]) -> dict[str, int]:
    import collections

    return dict(collections.Counter(mod for mod, _, caller in path if caller != mod))


@pytest.mark.slow
def test_following_options_from_the_ab_command_enters_no_module_more_than_twice():
    """The issue's count: from ``zl_core.app.commands.ab``, every function ``options``
    passes through, whole or in part (``options.lanes``, ``options.measure.python``), an
    entry being a call from another module."""
    path = follow_value("zl_core.app.commands", "ab", {"options"})
    walked = "\n".join(f"{'->' if caller != mod else '  '} {mod}.{name}" for mod, name, caller in path)
    entries = _entries(path)
    assert len(path) > 20 and len(entries) > 10, walked  # it follows the value far
    over = {mod: n for mod, n in entries.items() if n > MAX_ENTRIES}
    assert over == {}, f"entered more than {MAX_ENTRIES} times: {over}\n{walked}"


@pytest.mark.slow
def test_the_follower_sees_attributes_names_and_calls_across_modules():
    path = follow_value("zl_core.app.commands", "ab", {"options"})
    names = {(mod, name) for mod, name, _ in path}
    # options.measure.python into the seal check, options.lanes into the replay-root check,
    # and options whole into lanes.checked, which hands options.ops on.
    assert {("zl_core.app.seal", "check_frozen"), ("zl_core.app.replay_root", "check_replay_root"),
            ("zl_core.app.lanes", "checked"), ("zl_core.app.resolve", "check_op_specs")} <= names
    counted = _entries([("a", "f", "(the command)"), ("b", "g", "a"), ("b", "h", "b"), ("b", "g", "a")])
    assert counted == {"a": 1, "b": 2}


# -- small modules -------------------------------------------------------------------------

#: The most lines a module of any package may hold: one job each.
MAX_MODULE_LINES = 400


def test_no_module_of_any_package_is_over_the_limit():
    sources = Path(__file__).resolve().parents[1] / "packages"
    long = {str(p.relative_to(sources)): n for p in sorted(sources.glob("*/src/**/*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"split these by job (at most {MAX_MODULE_LINES} lines): {long}"


# -- one spelling: verdict names and durations ----------------------------------------------

#: zl_report's modules: they rank and colour verdicts by the names zl_core defines.
REPORT_ROOT = Path(zl_report.__file__).parent
#: Strings spelled like a verdict that are no verdict: a measurement row's status (its
#: ``FAILED``, interface.rows) and the names ``__all__`` lists.
NOT_VERDICTS = {("zl_core.interface.rows", "FAILED")}


def _code_strings(path: Path):
    """(line, text) of every string of ``path``'s code but its docstrings and ``__all__``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip |= {id(element) for element in ast.walk(node.value)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _spelled_verdicts(roots: dict[str, Path]) -> list[str]:
    from zl_core.foundation import verdicts

    names = {value for name, value in vars(verdicts).items() if name.isupper() and isinstance(value, str)}
    return [f"{_module_name(p, root)}:{line}: {text}" for root in roots.values() for p in sorted(root.rglob("*.py"))
            if p != Path(verdicts.__file__) for line, text in _code_strings(p)
            if text in names and (_module_name(p, root), text) not in NOT_VERDICTS]


def test_verdict_names_are_spelled_once_for_the_core_and_the_report():
    assert _spelled_verdicts({"zl_core": ROOT, "zl_report": REPORT_ROOT}) == [], (
        "name a verdict by its constant in zl_core.foundation.verdicts")


def test_the_verdict_check_sees_a_spelled_verdict(tmp_path):
    (tmp_path / "sample.py").write_text('"""FASTER in a docstring."""\nBAD = ("SLOWER", "fine")\n')
    assert _spelled_verdicts({"pkg": tmp_path}) == [f"{tmp_path.name}.sample:2: SLOWER"]


def test_a_duration_is_written_by_one_formatter():
    from zl_core.foundation.formats import duration

    assert [duration(s) for s in (None, 4.24, 42.4, 252, 15120)] == ["-", "4.2 s", "42 s", "4.2 min", "4.2 h"]
    # No other function of any package formats a duration: zl_report takes this one.
    sources = Path(__file__).resolve().parents[1] / "packages"
    own = [f"{p.relative_to(sources)}: {node.name}" for p in sorted(sources.glob("*/src/**/*.py"))
           for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
           if isinstance(node, ast.FunctionDef) and "duration" in node.name and p.name != "formats.py"]
    assert own == []
    import zl_report.format

    assert zl_report.format.duration is duration
