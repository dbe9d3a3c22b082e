"""pytest plugin: which shapes a benchmark runs, and which shape is running now.

* ``ZL_SHAPE_FILE`` set (non-empty): after a benchmark's own ``set_shapes``
  (FlagGems' YAML lookup, a subclass's hard-coded list, the comprehensive
  merge), its shapes are replaced by the file's entry for the benchmark,
  looked up like FlagGems does: ``op_name`` first, then the class names of
  ``type(self).__mro__`` nearest first (BLAS ops keep theirs under
  ``BlasBenchmark``, everything falls back to ``Benchmark``). No entry → the
  benchmark keeps its own shapes and a note says so, listing the keys tried.
* Unset or empty: FlagGems' own shapes.
* Either way the shapes actually used go to ``<cell>/shapes.yaml``.
* Each input the benchmark's ``get_input_iter(dtype)`` yields starts a row: the
  row clock ticks and the TTGIR recorder gets the row's label, the dtype plus a
  path-safe form of the Size Detail string FlagGems prints for that row
  (``float16_64x64_1``; results.json rows carry the same ``shape_label``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from zl_core.foundation.atomic import write_text_atomic
from zl_core.interface import contract

from zl_flaggems.cell import benchapi, cellenv
from zl_flaggems.cell.rowclock import CLOCK

PLUGIN = "shapes"
SHAPES_NAME = "shapes.yaml"

_file_cache: dict[str, dict] = {}
_used: dict[str, dict] = {}
_shards: dict[str, dict] = {}  # benchmark -> what this sweep shard saw of its shapes
_set_depth = 0
_iter_depth = 0
_recorder: Any = None
_recorder_looked = False


# -- the shape file ----------------------------------------------------------------


def shape_file() -> Path | None:
    value = cellenv.env(contract.SHAPE_FILE)
    return Path(value) if value else None


def load_shape_file(path: Path) -> dict:
    key = str(path)
    if key not in _file_cache:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        _file_cache[key] = data if isinstance(data, dict) else {}
    return _file_cache[key]


def lookup(data: dict, op_name: str | None, cls: type) -> tuple[str | None, dict | None, list[str]]:
    """``(key, entry, tried)``: FlagGems' order, op name then the class chain."""
    tried: list[str] = []
    candidates = ([op_name] if op_name else []) + [c.__name__ for c in cls.__mro__ if c is not object]
    for name in candidates:
        if name in tried:
            continue
        tried.append(name)
        entry = data.get(name)
        if isinstance(entry, dict) and "shapes" in entry:
            return name, entry, tried
    return None, None, tried


def _as_shape(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value


def _plain(value: Any) -> Any:
    """YAML-safe copy: tuples become lists, unknown objects their str()."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def apply_shape_file(bench: Any, path: Path | None) -> str:
    """Inject the file's shapes into ``bench``; returns the source written to shapes.yaml."""
    if path is None:
        return "upstream"
    op_name = getattr(bench, "op_name", None)
    try:
        data = load_shape_file(path)
    except Exception as exc:  # noqa: BLE001 - preflight checked it; say so if it broke since
        cellenv.note(PLUGIN, f"cannot read shape file {path}: {cellenv.one_line(exc)}; "
                     "keeping the benchmark's own shapes")
        return f"upstream (shape file unreadable: {path})"
    key, entry, tried = lookup(data, op_name, type(bench))
    if entry is None:
        cellenv.note(PLUGIN, f"{path} has no entry for op {op_name!r} (tried {', '.join(tried)}); "
                     "keeping the benchmark's own shapes")
        return f"upstream (no entry in {path})"
    shapes = entry.get("shapes") or []
    bench.shapes = [_as_shape(s) for s in shapes]
    if "shape_desc" in entry:
        bench.shape_desc = entry["shape_desc"]
    cellenv.note(PLUGIN, f"op {op_name!r}: {len(bench.shapes)} shapes from {path} key={key}")
    return f"file:{path} key={key}"


def sweep_shard() -> tuple[int, int] | None:
    """``(index, count)`` of ``ZL_SWEEP_SHARD``, or None (not a shard, or unreadable)."""
    value = cellenv.env(contract.SWEEP_SHARD)
    try:
        index, count = (int(part) for part in value.split("/"))
    except (AttributeError, ValueError):
        return None
    return (index, count) if 0 <= index < count else None


def take_shard(bench: Any) -> None:
    """A sweep shard keeps every ``count``-th shape from ``index`` on, of the shapes the
    benchmark settled (whatever their source), and writes what it saw to its identity
    (:mod:`zl_flaggems.host.sweep_merge` checks the shards covered the set)."""
    shard = sweep_shard()
    if shard is None:
        return
    index, count = shard
    name = str(getattr(bench, "op_name", None) or type(bench).__name__)
    shapes = getattr(bench, "shapes", None)
    if not isinstance(shapes, (list, tuple)):
        _shards[name] = {"total": None, "digest": None, "mine": 0}
    else:
        whole = list(shapes)
        digest = hashlib.sha256(json.dumps(_plain(whole), sort_keys=True).encode()).hexdigest()[:16]
        bench.shapes = whole[index::count]
        _shards[name] = {"total": len(whole), "digest": digest, "mine": len(bench.shapes)}
        cellenv.note(PLUGIN, f"sweep shard {index + 1} of {count}: {len(bench.shapes)} of "
                     f"{len(whole)} shapes of {name}")
    cellenv.merge_identity(PLUGIN, {"sweep_shard": {"index": index, "count": count,
                                                    "ops": dict(_shards)}})


def record_used(bench: Any, source: str) -> None:
    op_name = str(getattr(bench, "op_name", None) or type(bench).__name__)
    _used[op_name] = {
        "shapes": _plain(list(getattr(bench, "shapes", None) or [])),
        "shape_desc": _plain(getattr(bench, "shape_desc", None)),
        "source": source,
    }
    write_used()


def write_used() -> None:
    cell = cellenv.cell_dir()
    if cell is None or not _used:
        return
    try:
        import yaml

        text = yaml.safe_dump(_used, sort_keys=False, default_flow_style=None, width=100)
        write_text_atomic(cell / SHAPES_NAME, text)
    except Exception as exc:  # noqa: BLE001
        cellenv.note(PLUGIN, f"could not write {SHAPES_NAME}: {cellenv.one_line(exc)}")


# -- wrappers ---------------------------------------------------------------------


def _wrap_set_shapes(original: Any) -> Any:
    def set_shapes(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _set_depth
        _set_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            _set_depth -= 1
        if _set_depth == 0:  # outermost call only: a subclass calling super() applies once
            source = apply_shape_file(self, shape_file())
            take_shard(self)
            record_used(self, source)
        return result

    return set_shapes


def _recorder_module() -> Any:
    global _recorder, _recorder_looked
    if not _recorder_looked:
        _recorder_looked = True
        try:
            from zl_flaggems.cell import ttgir_recorder
        except ImportError:
            _recorder = None
        else:
            _recorder = ttgir_recorder
    return _recorder


def begin_row(bench: Any, item: Any, dtype: Any = None) -> int:
    detail = benchapi.size_detail_of(bench, item)
    if detail is not None:
        label = benchapi.row_label(dtype, detail)
    else:
        label = benchapi.row_label(dtype, f"row{CLOCK.seq + 1}")
    seq = CLOCK.begin(detail, label)
    rec = _recorder_module()
    if rec is not None:
        try:
            rec.set_current_shape(label)
        except Exception as exc:  # noqa: BLE001 - labels are a convenience
            cellenv.note(PLUGIN, f"set_current_shape failed: {cellenv.one_line(exc)}")
    return seq


def _labelled(bench: Any, source: Iterable, dtype: Any = None) -> Iterator:
    global _iter_depth
    it = iter(source)
    try:
        while True:
            _iter_depth += 1
            try:
                item = next(it)
            except StopIteration:
                return
            finally:
                _iter_depth -= 1
            begin_row(bench, item, dtype)
            yield item
    finally:
        close = getattr(it, "close", None)
        if callable(close):
            close()


def _wrap_input_iter(original: Any) -> Any:
    def get_input_iter(self: Any, *args: Any, **kwargs: Any) -> Any:
        global _iter_depth
        nested = _iter_depth > 0  # a subclass delegating to super(): count rows once
        _iter_depth += 1
        try:
            source = original(self, *args, **kwargs)
        finally:
            _iter_depth -= 1
        if nested:
            return source
        dtype = args[0] if args else next(iter(kwargs.values()), None)  # get_input_iter(dtype)
        return _labelled(self, source, dtype)

    return get_input_iter


def patch_class(cls: type) -> None:
    benchapi.wrap_own(cls, "set_shapes", _wrap_set_shapes)
    benchapi.wrap_own(cls, "get_input_iter", _wrap_input_iter)


def install(modules: Iterable[Any]) -> set[type]:
    """Patch every benchmark class reachable from ``modules`` (idempotent)."""
    roots = benchapi.discover_roots(modules)
    for root in roots:
        for cls in benchapi.hierarchy(root):
            patch_class(cls)
        benchapi.on_subclass(root, PLUGIN, patch_class)
    return roots


# -- pytest hooks ------------------------------------------------------------------


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)
    path = shape_file()
    mode = f"file:{path}" if path is not None else "upstream"
    # The provider wrote shape_mode; a cell started by hand records its own.
    cellenv.merge_identity(PLUGIN, {"shape_mode": cellenv.env(contract.SHAPE_MODE) or mode}, fill=True)


def pytest_collection_finish(session: Any) -> None:
    install(benchapi.modules_of_items(session.items))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    install(benchapi.modules_of_items([item]))


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    write_used()
