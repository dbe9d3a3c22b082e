"""Which dtypes a FlagGems benchmark runs, and which ones its command line accepts.

FlagGems (benchmark/base.py) gives every benchmark a list of the dtypes it runs: the
``dtypes=`` its test passes, else its class's ``DEFAULT_DTYPES``. ``--dtypes`` narrows
that list; ``Benchmark.set_dtypes`` refuses a dtype outside it with a ValueError
(:data:`REJECTION`), and ``benchmark/conftest.py`` accepts only the names in its
``--dtypes`` option's ``choices`` (a usage error of pytest for any other). Both are read
here from the checkout's own files (:mod:`.dtype_source`), so that a dtype either of
them would refuse is refused before a cell starts.

A benchmark whose list cannot be read reads as unknown (None): a class of its own that
sets ``self.dtypes``, overrides ``set_dtypes``, or a ``run``/``init_user_config`` that
never reaches ``set_dtypes``; a list that depends on the run; no benchmark built in the
test at all. Its dtypes are then checked against the command line's only, and a
rejection at run time is FlagGems' to say (:func:`rejected`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from zl_flaggems.host.dtype_source import MUTATORS, BenchFolder, Dtypes, SourceModule, canonical

#: What ``Benchmark.set_dtypes`` raises for a dtype the benchmark does not run
#: (FlagGems' own wording, benchmark/base.py: ``Given dtype(s) 'torch.float64'can't be
#: supported by this op 'abs'``; no space before "can't" in FlagGems' text).
REJECTION = re.compile(r"Given dtype\(s\) '([^'\n]*)'\s*can't be supported by this op '([^'\n]*)'")
#: The methods through which a benchmark's run reaches ``set_dtypes``.
_REACHES_FILTER = ("init_user_config", "set_dtypes")
#: Helper calls followed from a test function to the benchmark it builds.
_MAX_HELPERS = 4


class BenchDtypes:
    """The dtype facts of one checkout's benchmark folder, its files parsed once."""

    def __init__(self, bench: Path):
        self.folder = BenchFolder(bench)

    def choices(self) -> Dtypes | None:
        """The names ``--dtypes`` accepts (``choices`` of its ``addoption`` in
        ``conftest.py``); None when the checkout does not say or says it in a way that
        depends on the run (a conftest without such a list restricts nothing)."""
        conftest = self.folder.module("conftest")
        if conftest is None:
            return None
        for node in ast.walk(conftest.tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "addoption" and node.args
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--dtypes"):
                given = next((k.value for k in node.keywords if k.arg == "choices"), None)
                return None if given is None else _choice_names(conftest, given)
        return None

    def runs(self, test_file: str, function: str) -> Dtypes | None:
        """The dtypes ``def test_<function>`` of ``test_<test_file>.py`` runs unfiltered,
        in order, or None when that cannot be read from the files."""
        module = self.folder.module(f"test_{test_file}")
        func = module.functions.get(f"test_{function}") if module else None
        if module is None or func is None:
            return None
        found = _built_dtypes(module, func, set())
        if not found:
            return None
        merged: list[str] = []
        for dtypes in found:
            if dtypes is None:
                return None
            merged.extend(d for d in dtypes if d not in merged)
        return tuple(merged)


def _choice_names(conftest: SourceModule, given: ast.expr) -> Dtypes | None:
    """``[str(ele).split(".")[-1] for ele in <dtypes>]`` (FlagGems' spelling) or a list
    of string literals."""
    if isinstance(given, (ast.List, ast.Tuple)):
        names = [e.value for e in given.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return tuple(names) if len(names) == len(given.elts) else None
    if isinstance(given, ast.ListComp) and len(given.generators) == 1:
        loop = given.generators[0]
        if not loop.ifs and isinstance(loop.target, ast.Name) and _is_short_name(given.elt, loop.target.id):
            dtypes = conftest.dtypes(loop.iter)
            return tuple(dict.fromkeys(dtypes)) if dtypes is not None else None
    return None


def _is_short_name(expr: ast.expr, var: str) -> bool:
    """``str(var).split(".")[-1]``: "torch.float16" -> "float16"."""
    text = ast.unparse(expr).replace("'", '"')
    return text == f'str({var}).split(".")[-1]'


def _built_dtypes(module: SourceModule, func: ast.FunctionDef, seen: set[str]) -> list[Dtypes | None]:
    """For every benchmark ``func`` builds (directly or through this file's helper
    functions it calls), the dtypes it runs (None where unknown)."""
    seen.add(func.name)
    local = {n.name: n for n in ast.walk(func) if isinstance(n, ast.ClassDef)}
    names = _local_names(func)
    found: list[Dtypes | None] = []
    for node in ast.walk(func):
        if not isinstance(node, ast.Call):
            continue
        target = module.resolve_class(node.func, local)
        if target is not None:
            chain = _class_chain(*target, local)
            if chain is not None:
                found.append(_call_dtypes(module, node, chain, names))
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name in module.functions and name not in seen and len(seen) <= _MAX_HELPERS:
            found.extend(_built_dtypes(module, module.functions[name], seen))
    return found


def _local_names(func: ast.FunctionDef) -> dict[str, ast.expr | None]:
    """A function's own names: the value of one bound once by a plain ``name = ...``;
    None for a parameter, a loop variable, or a name bound more than once."""
    stores: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    names: dict[str, ast.expr | None] = dict.fromkeys(stores)
    for node in ast.walk(func):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and stores[node.targets[0].id] == 1):
            names[node.targets[0].id] = node.value
    params = func.args
    for arg in (*params.posonlyargs, *params.args, *params.kwonlyargs, params.vararg, params.kwarg):
        if arg is not None:
            names[arg.arg] = None
    for node in ast.walk(func):  # changed in place: ``dtypes.append(torch.float64)``
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.attr in MUTATORS):
            names[node.func.value.id] = None
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(dict.fromkeys(node.names))
    return names


def _class_chain(module: SourceModule, cls: ast.ClassDef, local: dict[str, ast.ClassDef]
                 ) -> list[tuple[SourceModule, ast.ClassDef]] | None:
    """The class and its ancestors, first bases first, when it is a FlagGems benchmark
    class: its root defines ``set_dtypes`` and ``DEFAULT_DTYPES`` (None otherwise)."""
    chain: list[tuple[SourceModule, ast.ClassDef]] = []
    current: tuple[SourceModule, ast.ClassDef] | None = (module, cls)
    while current is not None and len(chain) <= 32:
        chain.append(current)
        owner, node = current
        current = next((found for base in node.bases
                        if (found := owner.resolve_class(base, local if owner is module else None))),
                       None)
    root = chain[-1][1]
    if _method(root, "set_dtypes") is None or _class_assign(root, "DEFAULT_DTYPES") is None:
        return None
    return chain


def _call_dtypes(module: SourceModule, call: ast.Call, chain: list[tuple[SourceModule, ast.ClassDef]],
                 names: dict[str, ast.expr | None]) -> Dtypes | None:
    """What one benchmark construction runs: its ``dtypes=``, else the nearest
    ``DEFAULT_DTYPES``; None where a class of the chain decides otherwise."""
    if any(_bypasses_filter(cls) for _, cls in chain[:-1]):
        return None
    given = next((k.value for k in call.keywords if k.arg == "dtypes"), None)
    if given is None and any(k.arg is None for k in call.keywords):
        return None  # **kwargs may carry dtypes
    overrides_init = any(_method(cls, "__init__") for _, cls in chain[:-1])
    if given is None and len(call.args) >= 3 and not overrides_init:
        given = call.args[2]  # Benchmark(op_name, torch_op, dtypes)
    if given is None and any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if given is not None and not (isinstance(given, ast.Constant) and given.value is None):
        return module.dtypes(given, names)
    for owner, cls in chain:
        default = _class_assign(cls, "DEFAULT_DTYPES")
        if default is not None:
            return owner.dtypes(default)
    return None


def _bypasses_filter(cls: ast.ClassDef) -> bool:
    """A subclass that may run other dtypes than its list, or skip ``--dtypes``."""
    if _method(cls, "set_dtypes") is not None:
        return True
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Attribute) and t.attr in ("dtypes", "to_bench_dtypes") for t in targets):
            return True
    init = _method(cls, "__init__")
    if init is not None and not _passes_dtypes_on(init):
        return True
    for name in ("run", "init_user_config"):
        method = _method(cls, name)
        if method is not None and not _calls_any(method, _REACHES_FILTER):
            return True
    return False


def _passes_dtypes_on(init: ast.FunctionDef) -> bool:
    """An ``__init__`` that hands ``dtypes`` on untouched: it names it only to pass its
    own parameter (default None) as ``dtypes=dtypes``, or not at all (``**kwargs``)."""
    params = [*init.args.args, *init.args.kwonlyargs]
    defaults = dict(zip([a.arg for a in init.args.args][::-1], init.args.defaults[::-1], strict=False))
    defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True) if d})
    if any(a.arg == "dtypes" for a in params):
        default = defaults.get("dtypes")
        if default is not None and not (isinstance(default, ast.Constant) and default.value is None):
            return False
    for node in ast.walk(init):
        if isinstance(node, ast.keyword) and node.arg == "dtypes":
            if not (isinstance(node.value, ast.Name) and node.value.id == "dtypes"):
                return False
        elif isinstance(node, ast.Name) and node.id == "dtypes" and not isinstance(node.ctx, ast.Load):
            return False
    return True


def _calls_any(func: ast.FunctionDef, names: tuple[str, ...]) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in names
               for n in ast.walk(func))


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _class_assign(cls: ast.ClassDef, name: str) -> ast.expr | None:
    for node in cls.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return node.value
    return None


def rejected(log_text: str) -> list[str]:
    """The dtypes a cell's benchmark refused in FlagGems' own words (``torch.`` left
    off), [] when it refused none."""
    names: list[str] = []
    for match in REJECTION.finditer(log_text):
        for part in match.group(1).split(","):
            name = canonical(part.strip().removeprefix("torch."))
            if name and name not in names:
                names.append(name)
    return names
