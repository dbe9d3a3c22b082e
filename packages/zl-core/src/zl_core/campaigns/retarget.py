"""Move a frozen task record to a lane or another folder without knowing its type.

Executors receive the campaign's task records (screen tasks, A/B tasks) and must
pin them to the lane they run on; the Dask executor must also point their folders
at a worker's scratch space, and the results back at the campaign folder. These
functions walk a record's attrs fields (and the tuples, lists and dicts inside
them) and rebuild only what changed, so a new task type needs nothing here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any, TypeVar

import attrs

T = TypeVar("T")
DEVICE_FIELD = "device"
_Hook = Callable[[Any, dict], dict]


def _map(value: Any, leaf: Callable[[Any], Any], hook: _Hook | None = None) -> Any:
    """``value`` rebuilt with ``leaf`` applied to every leaf and ``hook`` to every record."""
    if attrs.has(type(value)):
        changed = {}
        for field in attrs.fields(type(value)):
            old = getattr(value, field.name)
            new = _map(old, leaf, hook)
            if new is not old:
                changed[field.alias] = new
        if hook is not None:
            changed = hook(value, changed)
        return attrs.evolve(value, **changed) if changed else value
    if isinstance(value, dict):
        items = {k: _map(v, leaf, hook) for k, v in value.items()}
        return items if any(items[k] is not value[k] for k in value) else value
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        items = [_map(v, leaf, hook) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return tuple(items) if isinstance(value, tuple) else items
    return leaf(value)


def _same(value: Any) -> Any:
    return value


def _has_device(record: Any) -> bool:
    return any(f.name == DEVICE_FIELD for f in attrs.fields(type(record)))


def on_device(task: T, device: str | None) -> T:
    """``task`` with every ``device`` field (its own, its cell requests') set to ``device``."""
    def hook(record: Any, changed: dict) -> dict:
        if _has_device(record) and getattr(record, DEVICE_FIELD) != device:
            changed[DEVICE_FIELD] = device
        return changed

    return _map(task, _same, hook)


def devices_of(task: Any) -> set[str | None]:
    """Every device a task record names (a placed task names exactly one)."""
    found: set[str | None] = set()

    def hook(record: Any, changed: dict) -> dict:
        if _has_device(record):
            found.add(getattr(record, DEVICE_FIELD))
        return changed

    _map(task, _same, hook)
    return found


def rebased(value: T, old_root: Path, new_root: Path) -> T:
    """``value`` with every path (and path string) under ``old_root`` moved under ``new_root``."""
    old_root, new_root = Path(old_root), Path(new_root)
    prefix = str(old_root) + "/"

    def leaf(item: Any) -> Any:
        if isinstance(item, PurePath):
            try:
                return type(item)(new_root / Path(item).relative_to(old_root))
            except ValueError:
                return item
        if isinstance(item, str) and (item == str(old_root) or item.startswith(prefix)):
            return str(new_root) + item[len(str(old_root)):]
        return item

    return _map(value, leaf)
