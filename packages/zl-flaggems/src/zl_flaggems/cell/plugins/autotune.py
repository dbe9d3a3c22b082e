"""pytest plugin: pin autotune configs across the two sides of a comparison.

Load with ``-p zl_flaggems.cell.plugins.autotune`` in a cell process. Settings come
from the cell contract (``ZL_CELL_DIR``, ``ZL_AUTOTUNE_MODE``, ``ZL_REPLAY_DIR``,
``ZL_BACKEND``); without ``ZL_CELL_DIR`` the plugin does nothing.

* ``record``: every config a tuner hands out for a key is written to
  ``<cell>/autotune_records/`` (what was *used*, including persistent-cache hits).
* ``replay``: every key found in the source record gets the recorded config
  without benchmarking and without reading FlagGems' persistent cache; a key not
  in the record prints ``AUTOTUNE_REPLAY_FALLBACK kernel=<name> key=<key>`` once
  and tunes as usual. A record from another backend stops the session (exit 3).
  The replay cell writes its own record of what it used, so it can be audited
  and replayed in turn.
* ``uncontrolled`` (or unset): nothing is touched.

How: both Triton's ``Autotuner.run`` and FlagGems' ``LibTuner.run`` decide a
config through two calls on ``self.cache`` (``key in cache``, then
``cache[key]``) with the key computed by the class itself (LibTuner's
``get_key`` applies its strategies). Instead of re-deriving that key in a
``run`` wrapper for every launch, a set-only data descriptor on
``Autotuner.cache`` wraps whatever a tuner assigns to ``self.cache`` (the dict
in ``Autotuner.__init__``, the ``ConfigCache`` in ``LibTuner.__init__`` and its
later re-assignments) in an overlay that sees exactly the class's own key. Reads
of ``self.cache`` are plain instance-dict lookups, so there is no per-launch
getter; the overlay adds one Python call per cache access. Kernels whose tuner
has a single config never consult the cache: there is nothing to tune, so they
are neither recorded nor reported. The overlays are
:mod:`zl_flaggems.cell.autotune_cache`'s; the record files :mod:`zl_flaggems.common.autotune_records`'.
"""

from __future__ import annotations

import gc
import inspect
import itertools
import math
import os
import weakref
from pathlib import Path
from typing import Any

import pytest
from zl_core.interface import contract

from zl_flaggems.cell import crashsafe
from zl_flaggems.cell.autotune_cache import _CacheOverlay, _CacheSlot, _RecordCache, _ReplayCache
from zl_flaggems.cell.emitter import Emitter
from zl_flaggems.common import gems_env
from zl_flaggems.common.autotune_records import (
    FALLBACK_MARKER,
    RECORDS_DIR,
    AutotuneRecorder,
    ReplayBook,
    TunerId,
    config_from_dict,
    config_identity,
    config_to_dict,
    key_to_json,
    preflight_line,
    replay_problem,
    tuner_id_for,
    write_meta,
)

_MISSING = object()
_HUB: AutotuneHub | None = None
_SEQ = itertools.count()  # process-wide construction order of wrapped tuners


# -- the hub --------------------------------------------------------------------


class AutotuneHub:
    """Process-wide state of the plugin: mode, recorder, replay book, wrapped tuners."""

    def __init__(self, mode: str, recorder: AutotuneRecorder, book: ReplayBook | None = None, *,
                 config_cls: Any = None, emit: Any = None):
        if mode not in ("record", "replay"):
            raise ValueError(f"autotune mode must be record or replay, got {mode!r}")
        if mode == "replay" and book is None:
            raise ValueError("replay needs a ReplayBook")
        self.mode = mode
        self.recorder = recorder
        self.book = book
        self.config_cls = config_cls
        self._emit = emit or Emitter().emit
        self._tuners: list[weakref.ref] = []
        self._registered: set[int] = set()
        self._candidates: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._patched: list[tuple[type[Any], object]] = []
        self._benches: list[tuple[type[Any], Any]] = []
        self._warned: set[str] = set()
        #: (tuner, key) -> the sweep that picked it, until the pick is first read
        self._sweeping: dict[tuple[int, str], list[dict]] = {}
        self.errors = 0
        self.lost_pre_hooks = 0

    # installation -------------------------------------------------------------

    def install(self, autotuner_cls: type[Any]) -> None:
        """Put the descriptor on the class and wrap tuners that already exist."""
        previous = autotuner_cls.__dict__.get("cache", _MISSING)
        autotuner_cls.cache = _CacheSlot(self)
        self._patched.append((autotuner_cls, previous))
        bench = autotuner_cls.__dict__.get("_bench")
        if callable(bench):  # each candidate's time, for the record's sweep
            hub = self

            def _bench(tuner: Any, *args: Any, config: Any, **kwargs: Any) -> Any:
                took = bench(tuner, *args, config=config, **kwargs)
                hub.bench_took(tuner, config, took)
                return took

            autotuner_cls._bench = _bench
            self._benches.append((autotuner_cls, bench))
        for obj in gc.get_objects():
            try:
                if isinstance(obj, autotuner_cls) and "cache" in obj.__dict__:
                    obj.cache = obj.__dict__["cache"]
            except Exception:  # noqa: BLE001 - exotic objects in gc; skip them
                continue

    def uninstall(self) -> None:
        for cls, bench in reversed(self._benches):
            cls._bench = bench
        self._benches.clear()
        for cls, previous in reversed(self._patched):
            if isinstance(cls.__dict__.get("cache"), _CacheSlot):
                if previous is _MISSING:
                    delattr(cls, "cache")
                else:
                    cls.cache = previous
        self._patched.clear()
        for ref in self._tuners:
            tuner = ref()
            current = tuner.__dict__.get("cache") if tuner is not None else None
            if isinstance(current, _CacheOverlay):
                tuner.__dict__["cache"] = current.base
        self._tuners.clear()
        self._registered.clear()

    def wrap(self, tuner: Any, value: Any) -> Any:
        if isinstance(value, _CacheOverlay):
            if value.owner is tuner and value.hub is self:
                return value
            value = value.base
        if "_zl_seq" not in tuner.__dict__:  # construction order, for the tuner id
            tuner.__dict__["_zl_seq"] = next(_SEQ)
        if id(tuner) not in self._registered:
            self._registered.add(id(tuner))
            self._tuners.append(weakref.ref(tuner))
        overlay = _ReplayCache if self.mode == "replay" else _RecordCache
        return overlay(value, tuner, self)

    # identity -----------------------------------------------------------------

    def identity(self, tuner: Any) -> TunerId:
        cached = tuner.__dict__.get("_zl_tuner_id")
        if cached is not None:
            return cached
        base = _base_fn(tuner)
        mine = tuner.__dict__.get("_zl_seq", 0)
        earlier = 0
        for ref in self._tuners:
            other = ref()
            if other is None or other is tuner:
                continue
            if _base_fn(other) is base and other.__dict__.get("_zl_seq", 0) < mine:
                earlier += 1
        ident = tuner_id_for(base, earlier, type(tuner).__name__)
        tuner.__dict__["_zl_tuner_id"] = ident
        return ident

    def _candidate_configs(self, tuner: Any) -> dict[str, Any]:
        configs = getattr(tuner, "configs", None) or []
        cached = self._candidates.get(id(tuner))
        if cached is not None and cached[0] is configs:
            return cached[1]
        table: dict[str, Any] = {}
        for config in configs:
            table.setdefault(config_identity(config_to_dict(config)), config)
        self._candidates[id(tuner)] = (configs, table)
        return table

    # record -------------------------------------------------------------------

    def observe(self, tuner: Any, key: Any, config: Any) -> None:
        """Record the config a tuner hands out for ``key`` (never raises)."""
        try:
            data = config_to_dict(config)
            original = self._candidate_configs(tuner).get(config_identity(data))
            if original is not None and original is not config:
                data = config_to_dict(original)  # a cache-rebuilt config lacks the pre_hook note
            key_json = key_to_json(key)
            self.recorder.observe(self.identity(tuner), key_json, data, self._sweep(tuner, key_json))
        except Exception as exc:  # noqa: BLE001 - bookkeeping must never break a kernel launch
            self._error("record", exc)

    def bench_took(self, tuner: Any, config: Any, took: Any) -> None:
        """One candidate of a sweep timed (``Autotuner._bench``): kept until the pick is stored."""
        ms = took[0] if isinstance(took, (list, tuple)) and took else took
        if isinstance(ms, (int, float)) and math.isfinite(ms):
            tuner.__dict__.setdefault("_zl_bench", []).append((config, float(ms)))

    def sweep_ends(self, tuner: Any, key: Any) -> None:
        """A tuner stores its pick for ``key``: the candidates timed since its last pick are
        this key's sweep (a pick from the disk cache times none)."""
        timed = tuner.__dict__.pop("_zl_bench", None)
        try:
            if timed:
                self._sweeping[(id(tuner), key_to_json(key))] = [
                    {"config": config_to_dict(config), "ms": ms} for config, ms in timed]
        except Exception as exc:  # noqa: BLE001
            self._error("sweep", exc)

    def _sweep(self, tuner: Any, key_json: str) -> list[dict] | None:
        """Each candidate's median time in the sweep that picked ``key_json``, fastest first."""
        sweep = self._sweeping.pop((id(tuner), key_json), None)
        return sorted(sweep, key=lambda entry: entry["ms"]) if sweep else None

    # replay -------------------------------------------------------------------

    def resolve_pin(self, tuner: Any, key: Any) -> Any:
        """The config to inject for ``key``, or None after printing the fallback marker."""
        book = self.book
        assert book is not None  # resolve_pin is installed in replay mode only, which needs a book
        try:
            ident = self.identity(tuner)
            key_json = key_to_json(key)
        except Exception as exc:  # noqa: BLE001
            self._error("replay key", exc)
            return None
        data = book.lookup(ident, key_json)
        if data is None:
            self._report_missing(book, ident, key_json)
            return None
        try:
            config = self._candidate_configs(tuner).get(config_identity(data))
            if config is None:
                config = config_from_dict(data, self.config_cls or _triton_config_cls())
        except Exception as exc:  # noqa: BLE001 - an unbuildable record is a miss, said out loud
            self._error("replay config", exc)
            self._report_missing(book, ident, key_json)
            return None
        if data.get("pre_hook") and getattr(config, "pre_hook", None) is None:
            self.lost_pre_hooks += 1
            self._warn_once(f"pre_hook:{ident.tuner}",
                            f"zl autotune: recorded config of {ident.kernel} had pre_hook "
                            f"{data['pre_hook'].get('name')}; no matching config here, replayed without it")
        return config

    def _report_missing(self, book: ReplayBook, ident: TunerId, key_json: str) -> None:
        line = book.report_missing(ident, key_json)
        if line is not None:
            self._emit(line)

    # misc ---------------------------------------------------------------------

    def flush(self) -> None:
        self.recorder.flush()

    def stats(self) -> dict:
        return {
            "mode": self.mode,
            "tuners_wrapped": len(self._tuners),
            "keys_recorded": self.recorder.keys_recorded,
            "changed_picks": self.recorder.changed_picks,
            "pinned_keys": self.book.pinned if self.book else 0,
            "fallback_keys": self.book.fallbacks if self.book else 0,
            "replay_entries": len(self.book) if self.book else 0,
            "lost_pre_hooks": self.lost_pre_hooks,
            "errors": self.errors,
        }

    def _error(self, what: str, exc: BaseException) -> None:
        self.errors += 1
        self._warn_once(f"err:{what}", f"zl autotune: {what} bookkeeping failed ({type(exc).__name__}: "
                                       f"{str(exc).splitlines()[0] if str(exc) else ''}); continuing")

    def _warn_once(self, tag: str, line: str) -> None:
        if tag not in self._warned:
            self._warned.add(tag)
            self._emit(line, err=True)


def _base_fn(tuner: Any) -> Any:
    base = getattr(tuner, "base_fn", None)
    if base is not None:
        return base
    fn = getattr(tuner, "fn", None)
    while fn is not None and not inspect.isfunction(fn) and hasattr(fn, "fn"):
        fn = fn.fn
    return fn if fn is not None else tuner


def _triton_config_cls() -> type:
    from triton import Config

    return Config


def _flaggems_vendor() -> str:
    return gems_env.running_vendor(os.environ)


def _write_meta(records_dir: Path) -> None:
    try:
        import triton

        version = str(getattr(triton, "__version__", ""))
    except Exception:  # noqa: BLE001 - informative: meta.json then says "" (unknown)
        version = ""
    write_meta(records_dir, backend=os.environ.get(contract.BACKEND, ""), flaggems_vendor=_flaggems_vendor(),
               triton_version=version, op=os.environ.get(contract.OP, ""))


# -- public API for other plugins -------------------------------------------------


def marker_counts() -> dict[str, int]:
    """Markers this plugin printed so far (for results.json)."""
    return {FALLBACK_MARKER: _HUB.book.fallbacks if _HUB is not None and _HUB.book is not None else 0}


def autotune_stats() -> dict:
    return _HUB.stats() if _HUB is not None else {"mode": "uncontrolled"}


# -- pytest hooks -----------------------------------------------------------------


def pytest_configure(config: Any) -> None:
    global _HUB
    cell = os.environ.get(contract.CELL_DIR, "").strip()
    if not cell or _HUB is not None:
        return
    mode = os.environ.get(contract.AUTOTUNE_MODE, "uncontrolled").strip().lower()
    if mode not in ("record", "replay"):
        return
    emitter = Emitter(config)
    book = None
    if mode == "replay":
        source = os.environ.get(contract.REPLAY_DIR, "").strip()
        problem = (("replay_dir", ("ZL_AUTOTUNE_MODE=replay but ZL_REPLAY_DIR is not set; "
                                   "set it to the source cell's autotune_records/ folder"))
                   if not source else replay_problem(Path(source), os.environ.get(contract.BACKEND, "")))
        if problem is not None:
            line = preflight_line(*problem)
            emitter.emit(line, err=True)
            pytest.exit(line, returncode=3)
        book = ReplayBook.load(Path(source))
    try:
        from triton.runtime.autotuner import Autotuner, Config
    except Exception as exc:  # noqa: BLE001 - wrong interpreter: say so, do not crash collection
        emitter.emit(f"zl autotune: cannot import triton's Autotuner ({type(exc).__name__}: {exc}); "
                     f"autotune configs are NOT controlled in this cell", err=True)
        return
    records_dir = Path(cell) / RECORDS_DIR
    _write_meta(records_dir)
    hub = AutotuneHub(mode, AutotuneRecorder(records_dir), book, config_cls=Config, emit=emitter.emit)
    hub.install(Autotuner)
    _HUB = hub
    crashsafe.register(hub.flush)


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    hub = _HUB
    if hub is None:
        return
    hub.flush()
    cell = Path(os.environ.get(contract.CELL_DIR, ""))
    try:
        _write_meta(cell / RECORDS_DIR)  # flag_gems may only now know its vendor
        from zl_core.interface.caliber import IDENTITY_NAME, merge_identity

        if (cell / IDENTITY_NAME).is_file():
            merge_identity(cell, {"autotune_stats": hub.stats()})
    except Exception as exc:  # noqa: BLE001
        hub._error("session summary", exc)


def pytest_unconfigure(config: Any) -> None:
    global _HUB
    hub = _HUB
    if hub is None:
        return
    hub.flush()
    hub.uninstall()
    crashsafe.unregister(hub.flush)
    _HUB = None
