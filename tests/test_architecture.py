"""The layering docs/architecture.md states, checked on the source of zl_core."""

from __future__ import annotations

import ast
from pathlib import Path

import zl_core

ROOT = Path(zl_core.__file__).parent
COMMANDS_PKG = "zl_core.cli"


def _module_name(path: Path) -> str:
    parts = ("zl_core", *path.relative_to(ROOT).with_suffix("").parts)
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
               "zl_core.campaigns.ab_task", "zl_core.cell")
    for mod, imports in MODULES.items():
        if mod.startswith("zl_core.report"):
            assert not [i for i, _ in imports if i.startswith(running)], mod


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
STORE_BASE = ("zl_core.atomic", "zl_core.errors", "zl_core.caliber", "zl_core.ttgir_layout", "zl_core.stamps")


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
    readers = ("zl_core.report", "zl_core.ir", "zl_core.series", "zl_core.status")
    for mod, imports in MODULES.items():
        if mod.startswith(readers):
            engine = [i for i, _ in imports if i.startswith("zl_core.campaigns")
                      and not i.startswith("zl_core.campaigns.judging")]
            assert not engine, f"{mod} imports the engine: {engine}"


def test_the_timestamp_format_is_written_once():
    spelled = [p.relative_to(ROOT) for p in ROOT.rglob("*.py")
               if "%Y-%m-%dT%H:%M:%S" in p.read_text(encoding="utf-8") and p.name != "stamps.py"]
    assert spelled == []
