"""Finding and wrapping FlagGems' benchmark API without importing it.

The plugins must work against FlagGems' ``benchmark.base`` / ``benchmark.consts``
(HEAD), the legacy ``benchmark.performance_utils`` / ``benchmark.attri_util``,
and zl's built-in suite that mimics them. None of these is imported here; the
classes are found where the collected test modules put them, duck-typed by the
public shape of FlagGems' ``Benchmark`` (``run``, ``set_shapes``,
``get_input_iter``) and ``BenchmarkResult`` (a ``result`` list printed by
``__str__``).
"""

from __future__ import annotations

import functools
import re
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any, TypeGuard

#: Modules that hold the Benchmark class / BenchmarkResult, newest layout first.
KNOWN_BASE_MODULES = ("benchmark.base", "benchmark.performance_utils")
KNOWN_RESULT_MODULES = ("benchmark.consts", "benchmark.attri_util")
_BENCH_METHODS = ("run", "set_shapes", "get_input_iter")
WRAPPED_FLAG = "__zl_wrapped__"


def looks_like_benchmark(obj: object) -> TypeGuard[type]:
    return isinstance(obj, type) and all(callable(getattr(obj, m, None)) for m in _BENCH_METHODS)


def benchmark_root(cls: type) -> type | None:
    """The top-most class of ``cls``'s MRO that defines ``set_shapes`` itself."""
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        if "set_shapes" in vars(klass) and looks_like_benchmark(klass):
            return klass
    return None


def _roots_in_namespace(namespace: dict) -> set[type]:
    roots: set[type] = set()
    for value in list(namespace.values()):
        candidates: list[object] = [value]
        if isinstance(value, types.ModuleType):
            candidates = [getattr(value, "Benchmark", None)]
        for cand in candidates:
            if looks_like_benchmark(cand):
                root = benchmark_root(cand)
                if root is not None:
                    roots.add(root)
    return roots


def discover_roots(modules: Iterable[types.ModuleType] = ()) -> set[type]:
    """Benchmark root classes reachable from the given (test) modules and known modules."""
    roots: set[type] = set()
    for name in KNOWN_BASE_MODULES:
        mod = sys.modules.get(name)
        if mod is not None:
            roots |= _roots_in_namespace({"Benchmark": getattr(mod, "Benchmark", None)})
    for mod in modules:
        if mod is not None:
            roots |= _roots_in_namespace(vars(mod))
    return roots


def modules_of_items(items: Iterable[Any]) -> list[types.ModuleType]:
    seen: dict[int, types.ModuleType] = {}
    for item in items:
        mod = getattr(item, "module", None)
        if isinstance(mod, types.ModuleType):
            seen[id(mod)] = mod
    return list(seen.values())


def hierarchy(root: type) -> list[type]:
    """``root`` and every subclass defined so far, parents before children."""
    out: list[type] = []
    pending = [root]
    seen: set[int] = set()
    while pending:
        cls = pending.pop(0)
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        out.append(cls)
        try:
            pending.extend(cls.__subclasses__())
        except TypeError:
            pass
    return out


def result_classes(roots: Iterable[type]) -> set[type]:
    """``BenchmarkResult``-like classes next to the roots and in the known modules."""
    found: set[type] = set()
    names = {r.__module__ for r in roots} | set(KNOWN_BASE_MODULES) | set(KNOWN_RESULT_MODULES)
    for name in names:
        mod = sys.modules.get(name)
        cls = getattr(mod, "BenchmarkResult", None) if mod is not None else None
        if isinstance(cls, type) and "result" in getattr(cls, "__dataclass_fields__", {"result": 1}):
            found.add(cls)
    return found


def wrap_own(cls: type, name: str, make: Callable[[Callable], Callable]) -> bool:
    """Replace ``cls.<name>`` by ``make(original)`` if ``cls`` defines a plain function of
    that name itself and it is not wrapped yet. Returns True when it wrapped."""
    original = vars(cls).get(name)
    if not isinstance(original, types.FunctionType) or getattr(original, WRAPPED_FLAG, False):
        return False
    wrapper = make(original)
    functools.update_wrapper(wrapper, original)
    setattr(wrapper, WRAPPED_FLAG, True)
    wrapper.__zl_original__ = original  # type: ignore[attr-defined]  # a marker on the wrapper function
    setattr(cls, name, wrapper)
    return True


def on_subclass(root: type[Any], key: str, callback: Callable[[type], None]) -> None:
    """Call ``callback(cls)`` for every subclass of ``root`` defined from now on
    (benchmark classes defined inside test functions are created during the test)."""
    hooks = root.__dict__.get("__zl_subclass_hooks__")
    if hooks is None:
        hooks = {}
        previous = root.__dict__.get("__init_subclass__")

        def init_subclass(cls: type, **kwargs: Any) -> None:
            if previous is not None:
                previous.__func__(cls, **kwargs)
            else:
                super(root, cls).__init_subclass__(**kwargs)
            for name, hook in list(root.__dict__["__zl_subclass_hooks__"].items()):
                try:
                    hook(cls)
                except Exception as exc:  # noqa: BLE001 - never break a class definition, but say so
                    from zl_flaggems.cell import cellenv

                    cellenv.note(name, f"could not patch {cls.__qualname__}: {cellenv.one_line(exc)}")

        root.__zl_subclass_hooks__ = hooks
        root.__init_subclass__ = classmethod(init_subclass)  # type: ignore[assignment]  # patched on the class
    hooks[key] = callback


# -- size detail ------------------------------------------------------------------


def format_size_detail(shape_detail: object) -> str:
    """The "Size Detail" cell exactly as FlagGems' table prints it."""
    return "N/A" if shape_detail is None else f"{shape_detail}"


def size_detail_of(bench: Any, item: Any) -> str | None:
    """What FlagGems will print as Size Detail for one benchmark input, or None.

    Uses the benchmark's own ``unpack_to_args_kwargs`` + ``record_shapes`` (as its
    ``run`` does), with ``is_backward`` off during the unpack so no tensor is cloned:
    the sizes are the same either way.
    """
    unpack = getattr(bench, "unpack_to_args_kwargs", None)
    record = getattr(bench, "record_shapes", None)
    if not callable(unpack) or not callable(record):
        return None
    item = item if isinstance(item, tuple) else (item,)
    had_own = "is_backward" in getattr(bench, "__dict__", {})
    saved = getattr(bench, "is_backward", False)
    try:
        bench.is_backward = False
        args, kwargs = unpack(item)
    except Exception:  # noqa: BLE001 - a label is a convenience, never a failure
        return None
    finally:
        try:
            if had_own:
                bench.is_backward = saved
            else:
                del bench.is_backward
        except Exception:  # noqa: BLE001 - the flag put back as it was, best effort
            pass
    try:
        return format_size_detail(record(*args, **kwargs))
    except Exception:  # noqa: BLE001 - a label is a convenience, never a failure
        return None


def plain_dtype(dtype: object) -> str:
    """``torch.float16`` → ``float16`` (results.json and labels never carry the prefix)."""
    text = str(dtype)
    return text.removeprefix("torch.")


def row_label(dtype: object, size_detail: str) -> str:
    """The TTGIR shape folder of one row: ``float16_64x64_1``; dtype left out when unknown."""
    shape = shape_label(size_detail)
    kind = shape_label(plain_dtype(dtype)) if dtype not in (None, "") else ""
    return f"{kind}_{shape}" if kind else shape


_TORCH_SIZE = re.compile(r"torch\.Size\(\[([^\]]*)\]\)")
_NOT_LABEL = re.compile(r"[^A-Za-z0-9.=+-]+")
MAX_LABEL = 120


def shape_label(size_detail: str) -> str:
    """A path-safe label from a Size Detail string: ``[torch.Size([64, 64]), 1]`` → ``64x64_1``.

    Deterministic, so both sides of a comparison name the same shape alike.
    """

    def dims(match: re.Match) -> str:
        parts = [p.strip() for p in match.group(1).split(",") if p.strip()]
        return "x".join(parts) if parts else "scalar"

    text = _TORCH_SIZE.sub(dims, size_detail).replace("torch.", "")
    text = _NOT_LABEL.sub("_", text).strip("._-") or "shape"
    if len(text) > MAX_LABEL:
        import hashlib

        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        text = f"{text[: MAX_LABEL - 11]}_{digest}"
    return text
