"""What the autotune plugin puts in place of a Triton tuner's cache.

Recording: an overlay that reports each key's first config to the hub. Replay: an
overlay that answers recorded keys itself, so the wrapped cache is neither read
nor written for them. ``_CacheSlot`` wraps each cache a tuner is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zl_flaggems.cell.plugins.autotune import AutotuneHub

_UNSEEN = object()


class _CacheOverlay:
    """Stands in for a tuner's cache (a dict or FlagGems' ConfigCache)."""

    __slots__ = ("__weakref__", "_seen", "base", "hub", "owner")

    def __init__(self, base: Any, owner: Any, hub: AutotuneHub):
        self.base = base
        self.owner = owner
        self.hub = hub
        self._seen: set = set()

    def __contains__(self, key: Any) -> bool:
        return key in self.base

    def __getitem__(self, key: Any) -> Any:
        config = self.base[key]
        self._observe(key, config)
        return config

    def __setitem__(self, key: Any, value: Any) -> None:
        self.hub.sweep_ends(self.owner, key)
        self.base[key] = value

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __len__(self) -> int:
        return len(self.base)

    def __iter__(self):
        return iter(self.base)

    def __getattr__(self, name: str) -> Any:
        if name in _CacheOverlay.__slots__ or name in ("_pins",):
            raise AttributeError(name)
        return getattr(self.base, name)

    def __repr__(self) -> str:
        return f"<zl {type(self).__name__} over {self.base!r}>"

    def _observe(self, key: Any, config: Any) -> None:
        # First sight per key and cache object: later launches cost one set lookup.
        try:
            if key in self._seen:
                return
            self._seen.add(key)
        except TypeError:
            pass  # unhashable key: the recorder de-duplicates
        self.hub.observe(self.owner, key, config)


class _RecordCache(_CacheOverlay):
    __slots__ = ()


class _ReplayCache(_CacheOverlay):
    """Answers recorded keys itself; the wrapped cache is neither read nor written for them."""

    __slots__ = ("_pins",)

    def __init__(self, base: Any, owner: Any, hub: AutotuneHub):
        super().__init__(base, owner, hub)
        self._pins: dict = {}

    def _pin(self, key: Any) -> Any:
        try:
            pinned = self._pins.get(key, _UNSEEN)
        except TypeError:
            return self.hub.resolve_pin(self.owner, key)
        if pinned is _UNSEEN:
            pinned = self.hub.resolve_pin(self.owner, key)
            self._pins[key] = pinned
        return pinned

    def __contains__(self, key: Any) -> bool:
        return self._pin(key) is not None or key in self.base

    def __getitem__(self, key: Any) -> Any:
        config = self._pin(key)
        if config is None:
            config = self.base[key]
        self._observe(key, config)
        return config

    def __setitem__(self, key: Any, value: Any) -> None:
        if self._pin(key) is None:  # a pinned key is never tuned, so never persisted
            self.hub.sweep_ends(self.owner, key)
            self.base[key] = value


class _CacheSlot:
    """Set-only data descriptor for ``Autotuner.cache``: wraps each assigned cache.

    Having no ``__get__``, reads fall through to the instance ``__dict__`` at
    plain attribute speed.
    """

    def __init__(self, hub: AutotuneHub):
        self.hub = hub

    def __set__(self, inst: Any, value: Any) -> None:
        inst.__dict__["cache"] = self.hub.wrap(inst, value)

    def __delete__(self, inst: Any) -> None:
        del inst.__dict__["cache"]
