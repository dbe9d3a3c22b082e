"""Dtype lists of a FlagGems benchmark folder, read from its source without importing it.

The host that plans a campaign often has no torch, and importing FlagGems' benchmark
modules would start its device runtime, so the lists are read from the syntax tree.
What FlagGems writes is a small language: ``[torch.float16, torch.int32]``, a name from
``consts`` (``consts.FLOAT_DTYPES``, ``from .consts import FLOAT_DTYPES``), a list of the
test file itself, and ``+`` between them. Anything else (a call such as
``[get_fp8_dtype()]``, a comprehension, a conditional, a test's parameter) depends on
the run and reads as unknown (None), never as a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

#: torch's other names for its dtypes, as ``str(torch.<alias>)`` spells them.
TORCH_ALIASES = {
    "half": "float16", "float": "float32", "double": "float64", "chalf": "complex32",
    "cfloat": "complex64", "cdouble": "complex128", "short": "int16", "int": "int32",
    "long": "int64",
}
#: How deep names may refer to names before the reader gives up (a cycle reads unknown).
MAX_DEPTH = 12
#: List methods that change a module's list in place.
MUTATORS = ("append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse")

Dtypes = tuple[str, ...]


def canonical(name: str) -> str:
    """The dtype's own name (``cfloat`` -> ``complex64``): what ``--dtypes`` and rows say."""
    return TORCH_ALIASES.get(name, name)


class SourceModule:
    """One module of the benchmark folder: its top-level names, imports and classes."""

    def __init__(self, folder: BenchFolder, name: str, tree: ast.Module):
        self.folder = folder
        self.name = name
        self.tree = tree
        self.assigns: dict[str, ast.expr] = {}
        #: local name -> (sibling module, its attribute or None for the module itself)
        self.imports: dict[str, tuple[str, str | None]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for node in tree.body:
            self._top_level(node)
        self.unsettled = _unsettled_names(tree)

    def _top_level(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.assigns[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            self.assigns[node.target.id] = node.value
        elif isinstance(node, ast.ImportFrom):
            self._import_from(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:  # import benchmark.consts as consts
                parts = alias.name.split(".")
                if alias.asname and len(parts) == 2 and parts[0] == self.folder.package:
                    self.imports[alias.asname] = (parts[1], None)
        elif isinstance(node, ast.ClassDef):
            self.classes[node.name] = node
        elif isinstance(node, ast.FunctionDef):
            self.functions[node.name] = node

    def _import_from(self, node: ast.ImportFrom) -> None:
        """``from .consts import X`` / ``from benchmark.consts import X`` bind X of a
        sibling; ``from . import consts`` / ``from benchmark import consts`` the sibling."""
        package, module = self.folder.package, node.module or ""
        if node.level == 1:
            inner = module
        elif node.level == 0 and (module == package or module.startswith(package + ".")):
            inner = module[len(package) + 1:]
        else:
            return  # torch, flag_gems, a parent package: not this folder's
        for alias in node.names:
            local = alias.asname or alias.name
            self.imports[local] = (inner, alias.name) if inner else (alias.name, None)

    # -- names ---------------------------------------------------------------------

    def module_named(self, local: str) -> SourceModule | None:
        """The sibling module a local name is bound to (``consts`` in ``consts.X``)."""
        bound = self.imports.get(local)
        if bound is None or bound[1] is not None:
            return None
        return self.folder.module(bound[0])

    def class_named(self, local: str) -> tuple[SourceModule, ast.ClassDef] | None:
        if local in self.classes:
            return self, self.classes[local]
        bound = self.imports.get(local)
        if bound is not None and bound[1] is not None:
            other = self.folder.module(bound[0])
            if other is not None and bound[1] in other.classes:
                return other, other.classes[bound[1]]
        return None

    def resolve_class(self, expr: ast.expr, local: dict[str, ast.ClassDef] | None = None
                      ) -> tuple[SourceModule, ast.ClassDef] | None:
        """The class an expression names: ``X`` (this module, ``local`` ones first) or
        ``base.X`` (a sibling module)."""
        if isinstance(expr, ast.Name):
            if local and expr.id in local:
                return self, local[expr.id]
            return self.class_named(expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            other = self.module_named(expr.value.id)
            if other is not None and expr.attr in other.classes:
                return other, other.classes[expr.attr]
        return None

    # -- values ----------------------------------------------------------------------

    def dtypes(self, expr: ast.expr, local: Mapping[str, ast.expr | None] | None = None
               ) -> Dtypes | None:
        """The dtype list ``expr`` evaluates to, or None when it depends on the run.

        ``local`` holds a function's own names (None: assigned more than once, unknown)."""
        value = self._value(expr, 0, local or {})
        return value if isinstance(value, tuple) else None

    def _value(self, expr: ast.expr, depth: int, local: Mapping[str, ast.expr | None]
               ) -> Dtypes | str | None:
        """A list (tuple of names), one dtype (a name), or None (unknown)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, (ast.List, ast.Tuple)):
            out: list[str] = []
            for element in expr.elts:
                if isinstance(element, ast.Starred):
                    inner = self._value(element.value, depth + 1, local)
                    if not isinstance(inner, tuple):
                        return None
                    out.extend(inner)
                    continue
                one = self._value(element, depth + 1, local)
                if not isinstance(one, str):
                    return None
                out.append(one)
            return tuple(out)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = (self._value(expr.left, depth + 1, local),
                           self._value(expr.right, depth + 1, local))
            if isinstance(left, tuple) and isinstance(right, tuple):
                return left + right
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            if expr.value.id == "torch" and "torch" not in self.assigns and "torch" not in local:
                return canonical(expr.attr)  # torch.float16, as FlagGems always spells it
            other = self.module_named(expr.value.id)
            if other is not None:
                return other.named_value(expr.attr, depth + 1)
            return None
        if isinstance(expr, ast.Name):
            if expr.id in local:
                bound = local[expr.id]
                return None if bound is None else self._value(bound, depth + 1, local)
            return self.named_value(expr.id, depth + 1)
        return None

    def named_value(self, name: str, depth: int) -> Dtypes | str | None:
        if name in self.unsettled:
            return None
        if name in self.assigns:
            return self._value(self.assigns[name], depth + 1, {})
        bound = self.imports.get(name)
        if bound is not None and bound[1] is not None:
            other = self.folder.module(bound[0])
            if other is not None:
                return other.named_value(bound[1], depth + 1)
        return None


def _unsettled_names(tree: ast.Module) -> set[str]:
    """Module names whose value is not the one top-level assignment says: bound more than
    once or under a condition (``if fp64: X = [...]``), changed in place
    (``X.append(torch.float64)`` where the device supports it) or declared ``global``."""
    names: set[str] = set()
    stores: dict[str, int] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores[statement.name] = stores.get(statement.name, 0) + 1
            continue
        for inner in _module_scope(statement):
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                stores[inner.id] = stores.get(inner.id, 0) + 1
                if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
                    names.add(inner.id)  # bound by a loop, a with, a branch
    names.update(name for name, count in stores.items() if count > 1)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.attr in MUTATORS):
            names.add(node.func.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.value.id for t in targets
                         if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name))
        elif isinstance(node, ast.Global):
            names.update(node.names)
    return names


def _module_scope(node: ast.AST):
    """``node`` and what it holds, functions' and classes' own bodies left out."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield from _module_scope(child)


class BenchFolder:
    """A checkout's ``benchmark/`` folder: its modules parsed once, on demand."""

    def __init__(self, path: Path):
        self.path = path
        self.package = path.name  # "benchmark": absolute imports name it
        self._modules: dict[str, SourceModule | None] = {}

    def module(self, name: str) -> SourceModule | None:
        """The parsed ``<name>.py`` of the folder, None when absent or not Python."""
        if name not in self._modules:
            self._modules[name] = self._parse(name)
        return self._modules[name]

    def _parse(self, name: str) -> SourceModule | None:
        if not name.isidentifier():
            return None
        path = self.path / f"{name}.py"
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            return None
        return SourceModule(self, name, tree)
