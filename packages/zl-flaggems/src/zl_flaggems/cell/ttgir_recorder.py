"""TTGIR dump bookkeeping: which compiled variants ran, per (shape, kernel).

Fed by Triton's hooks (installed by :mod:`zl_flaggems.cell.plugins.ttgir`, which is
the only part that touches triton):

* the compilation listener -> :meth:`TtgirRecorder.on_compile` stores, per kernel
  hash, the TTGIR text and the parameters that name the variant;
* the kernel-load hook -> :meth:`TtgirRecorder.on_load` maps the loaded function
  handle to that hash;
* the launch hook -> :attr:`TtgirRecorder.launch_hook` counts launches per
  function handle into the current shape's dict.

Launch counting and measurement: the launch hook runs inside every timed
iteration, so it is one dict increment keyed by the function handle (no
hashing of names, no lookups of the variant, no allocation); everything else
(handle -> hash -> variant, naming, files) happens at flush time, between
shapes and tests. Triton 3.5/3.6 already call the (empty) hook chain on every
launch, so the added host time is one Python call; :func:`zl_flaggems.cell.ttgir_hook_cost.measure_hook_cost`
reports it and :func:`recorder_stats` the number of launches it was paid on,
so a validation run can put a number on it.

Launches inside an autotune sweep (``Autotuner._bench``) are counted apart
(:meth:`TtgirRecorder.sweep`): sweep losers are compiled only on the recording
side, so dumping them would make every record/replay pair look changed. So are
the harness's own launches (:meth:`TtgirRecorder.harness`): ``do_bench`` clears
L2 with ``cache.zero_()``, which FlagGems routes to its Triton fill kernel before
every timed iteration; dumped, a switch that touches that kernel would mark every
operator as changed. Both are listed in the index with shape ``-``, not dumped.

Other plugins call :func:`set_current_shape` when the benchmark moves to the next
input; until then launches are filed under ``"all"``. What a variant is and how it
is named: :mod:`zl_flaggems.cell.ttgir_variants`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
from zl_core.foundation.atomic import write_text_atomic
from zl_core.interface.ttgir_layout import IndexRow, safe_component, write_index

from zl_flaggems.cell.ttgir_variants import (
    OPTION_KEYS,
    Variant,
    _named,
    _options_from_json,
    _read_ttgir,
    _short,
    variant_params,
)

DEFAULT_SHAPE = "all"
SWEEP_SHAPE = "-"  # the index's shape column for launches kept apart from any shape
SWEEP = "sweep"
HARNESS = "harness"
APART_LABELS = {SWEEP: "autotune sweep", HARNESS: "benchmark harness"}
VARIANTS_NAME = "variants.json"
NO_TTGIR = "(no ttgir captured)"
UNRESOLVED = "(launched, but compiled before the recorder started)"


@attrs.frozen(kw_only=True)
class Plan:
    files: dict[str, str]  # path relative to ttgir/ -> TTGIR text
    rows: list[IndexRow]
    details: dict[str, dict]  # relative path -> hash, params, launches (variants.json)


class TtgirRecorder:
    """Collects compiled variants and launches; writes the dump on :meth:`flush`."""

    def __init__(self) -> None:
        self.variants: dict[str, Variant] = {}
        self.fn_to_hash: dict[Any, str] = {}
        self._shape = DEFAULT_SHAPE
        self._shape_counts: dict[str, dict[Any, int]] = {DEFAULT_SHAPE: {}}
        self._counts: dict[Any, int] = self._shape_counts[DEFAULT_SHAPE]
        #: Launches that are not the benchmark's: autotune sweeps, the harness's cache clearing.
        self._apart_counts: dict[str, dict[Any, int]] = {SWEEP: {}, HARNESS: {}}
        self._apart_stack: list[str] = []
        self._shape_listeners: list[Callable[[str], object]] = []
        self._written: dict[str, str] = {}
        #: Called at flush when some launched handles have no known hash (Triton
        #: 3.4 has no load hook); it should feed :meth:`on_load`.
        self.resolver: Callable[[], object] | None = None
        self._resolve_tried: set = set()
        #: Compile-only cells launch nothing: dump every compiled variant.
        self.dump_unlaunched = False
        self.compile_events = 0
        self.cache_hit_events = 0
        self.listener_errors = 0
        self.flushes = 0
        self.flush_seconds = 0.0
        self.last_flush_error: str | None = None
        self.hook_ns_per_call: float | None = None
        #: (directory, placeholder) pairs replaced in the TTGIR text, see :meth:`alias_paths`.
        self.path_aliases: list[tuple[str, str]] = []
        self._alias_patterns: list[tuple[re.Pattern, str]] = []
        self.launch_hook = self._make_launch_hook()

    def alias_paths(self, directories: Mapping[str, str | None]) -> None:
        """Replace per-cell directories in ``loc(...)`` paths with a placeholder.

        TTGIR carries source locations. Kernels FlagGems generates at run time
        live under ``FLAGGEMS_CACHE_DIR``, which is private to each cell when the
        tuner cache is isolated, so without this every generated kernel would
        differ between two sides by its path alone. ``{"FLAGGEMS_CACHE_DIR": path}``
        turns ``path`` into ``<FLAGGEMS_CACHE_DIR>``; code and line numbers stay.
        """
        pairs = []
        for label, directory in directories.items():
            if not directory:
                continue
            for form in {str(directory).rstrip("/"), os.path.realpath(str(directory)).rstrip("/")}:
                if len(form) > 1:
                    pairs.append((form, f"<{label}>"))
        self.path_aliases = sorted(set(pairs), key=lambda p: -len(p[0]))  # longest first: nested dirs
        # Whole path components only: /tmp/cell1 must not eat the start of /tmp/cell10.
        self._alias_patterns = [(re.compile(re.escape(d) + r"(?=[/\\\"']|$)", re.MULTILINE), p)
                                for d, p in self.path_aliases]

    def _normalise(self, text: str | None) -> str | None:
        if text is None:
            return None
        for pattern, placeholder in self._alias_patterns:
            text = pattern.sub(placeholder, text)
        return text

    # -- feeding ------------------------------------------------------------------

    def _make_launch_hook(self) -> Callable[[Any], None]:
        recorder = self

        def zl_count_launch(metadata: Any) -> None:
            # Keep this minimal: it runs on every launch, timed ones included.
            try:
                function = metadata.data["function"]  # LazyDict; .get() would run launch_metadata callbacks
            except (AttributeError, KeyError, TypeError):
                function = _function_of(metadata)
            counts = recorder._counts
            counts[function] = counts.get(function, 0) + 1

        return zl_count_launch

    def on_compile(self, *, src: Any, metadata: Mapping[str, Any], metadata_group: Mapping[str, str],
                   times: Any = None, cache_hit: bool = False) -> None:
        """Compilation listener body (fires on fresh compiles and on cache hits)."""
        self.compile_events += 1
        if cache_hit:
            self.cache_hit_events += 1
        digest = str(metadata.get("hash") or "")
        if not digest or digest in self.variants:
            return
        name = str(metadata.get("name") or getattr(src, "name", "") or "kernel")
        self.variants[digest] = Variant(hash=digest, kernel=name,
                                        ttgir=self._normalise(_read_ttgir(metadata_group, name)),
                                        params=variant_params(src, metadata), seq=len(self.variants),
                                        first_shape=self._shape)

    def on_load(self, module: Any, function: Any, name: str, metadata_group: Mapping[str, str],
                hash: str) -> None:
        """Kernel-load hook body: function handle -> hash (and a late variant if unseen)."""
        if function is not None:
            self.fn_to_hash[function] = hash
        if hash and hash not in self.variants and metadata_group:
            meta = _options_from_json(metadata_group)
            params = {k: _short(meta[k]) for k in OPTION_KEYS if meta.get(k) is not None}
            text = self._normalise(_read_ttgir(metadata_group, str(name)))
            self.variants[hash] = Variant(hash=hash, kernel=str(name), ttgir=text,
                                          params=params, seq=len(self.variants), first_shape=self._shape)

    @contextmanager
    def apart(self, kind: str) -> Iterator[None]:
        """Launches inside this block are counted under ``kind``, not the current shape."""
        self._apart_stack.append(kind)
        self._counts = self._apart_counts.setdefault(kind, {})
        try:
            yield
        finally:
            self._apart_stack.pop()
            self._counts = (self._apart_counts[self._apart_stack[-1]] if self._apart_stack
                            else self._shape_counts.setdefault(self._shape, {}))

    def sweep(self) -> Any:
        """Autotune benchmarking: losers compile only on the recording side of a pair."""
        return self.apart(SWEEP)

    def harness(self) -> Any:
        """The benchmark harness's own kernels (do_bench clearing L2 through FlagGems' fill)."""
        return self.apart(HARNESS)

    # -- shapes -------------------------------------------------------------------

    @property
    def current_shape(self) -> str:
        return self._shape

    def set_current_shape(self, label: str) -> None:
        label = str(label).strip() or DEFAULT_SHAPE
        if label == self._shape:
            return
        self._shape = label
        counts = self._shape_counts.setdefault(label, {})
        if not self._apart_stack:
            self._counts = counts
        for listener in list(self._shape_listeners):
            try:
                listener(label)
            except Exception:  # noqa: BLE001 - a failing flush must not break the benchmark
                self.listener_errors += 1

    def add_shape_listener(self, listener: Callable[[str], object]) -> None:
        if listener not in self._shape_listeners:
            self._shape_listeners.append(listener)

    def remove_shape_listener(self, listener: Callable[[str], object]) -> None:
        if listener in self._shape_listeners:
            self._shape_listeners.remove(listener)

    # -- planning and writing -----------------------------------------------------

    def _resolve(self, handles: set) -> None:
        # The resolver may scan every live object: only for handles not tried before.
        fresh = {h for h in handles if h not in self.fn_to_hash} - self._resolve_tried
        if self.resolver is None or not fresh:
            return
        self._resolve_tried |= fresh
        try:
            self.resolver()
        except Exception:  # noqa: BLE001
            self.listener_errors += 1

    def plan(self) -> Plan:
        """Names, files and index rows for what has been seen so far (pure, no I/O)."""
        shape_counts = {s: dict(c) for s, c in self._shape_counts.items()}
        apart_counts = {k: dict(c) for k, c in self._apart_counts.items()}
        self._resolve({h for c in (*shape_counts.values(), *apart_counts.values()) for h in c})
        launched: dict[tuple[str, str], int] = {}  # (shape, variant hash) -> launches
        unresolved: dict[str, int] = {}  # shape -> launches of kernels compiled before the recorder
        for shape, counts in shape_counts.items():
            for handle, n in counts.items():
                digest = self.fn_to_hash.get(handle)
                if digest is None or digest not in self.variants:
                    unresolved[shape] = unresolved.get(shape, 0) + n
                else:
                    launched[(shape, digest)] = launched.get((shape, digest), 0) + n
        ever = {digest for _, digest in launched}  # the variants listed so far
        if self.dump_unlaunched:
            for digest, variant in self.variants.items():
                if digest not in ever:
                    launched[(variant.first_shape, digest)] = 0
                    ever.add(digest)
        files, rows, details = self._launched_files(launched)
        rows += self._apart_rows(apart_counts, ever)
        rows += [IndexRow(shape=safe_component(shape), kernel="?", file=UNRESOLVED, launches=n)
                 for shape, n in sorted(unresolved.items())]
        return Plan(files=files, rows=rows, details=details)

    def _launched_files(self, launched: dict[tuple[str, str], int]
                        ) -> tuple[dict[str, str], list[IndexRow], dict[str, dict]]:
        """The files, index rows and details of the launched variants, named per (shape, kernel)."""
        groups: dict[tuple[str, str], list[tuple[Variant, int]]] = {}
        for (shape, digest), n in launched.items():
            variant = self.variants[digest]
            groups.setdefault((shape, variant.kernel), []).append((variant, n))
        files: dict[str, str] = {}
        rows: list[IndexRow] = []
        details: dict[str, dict] = {}
        for (shape, kernel), members in sorted(groups.items()):
            shape_dir, kernel_dir = safe_component(shape), safe_component(kernel)
            for (variant, n), name in _named(members):
                if variant.ttgir is None:
                    rows.append(IndexRow(shape=shape_dir, kernel=kernel_dir, file=NO_TTGIR, launches=n))
                    continue
                rel = f"{shape_dir}/{kernel_dir}/{name}.ttgir"
                files[rel] = variant.ttgir
                rows.append(IndexRow(shape=shape_dir, kernel=kernel_dir, file=rel, launches=n))
                details[rel] = {"hash": variant.hash, "shape": shape, "kernel": variant.kernel,
                                "launches": n, "params": variant.params}
        return files, rows, details

    def _apart_rows(self, apart_counts: dict[str, dict[Any, int]], ever: set[str]) -> list[IndexRow]:
        """Index rows of variants launched only in a sweep or the harness (not dumped)."""
        rows: list[IndexRow] = []
        for kind, counts in sorted(apart_counts.items()):
            only: dict[str, dict[str, Variant]] = {}
            for handle in counts:
                digest = self.fn_to_hash.get(handle)
                if digest in self.variants and digest not in ever:
                    only.setdefault(self.variants[digest].kernel, {})[digest] = self.variants[digest]
                    ever.add(digest)  # listed once, under the first kind it ran in
            for kernel, variants in sorted(only.items()):
                for _member, name in _named([(v, 0) for v in variants.values()]):
                    rows.append(IndexRow(shape=SWEEP_SHAPE, kernel=safe_component(kernel),
                                         file=f"({APART_LABELS.get(kind, kind)} only, not dumped: {name})",
                                         launches=0))
        return rows

    def flush(self, ttgir_root: Path) -> Path:
        """Write changed ``.ttgir`` files, drop renamed ones, rewrite index.tsv.

        Safe to call often (each test, each shape change, atexit, SIGTERM):
        unchanged files are not rewritten and every write is a temp file + rename.
        """
        started = time.perf_counter()
        root = Path(ttgir_root)
        try:
            plan = self.plan()
            root.mkdir(parents=True, exist_ok=True)
            written = dict(self._written)
            for rel, text in plan.files.items():
                digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
                target = root / rel
                if written.get(rel) == digest and target.is_file():
                    continue
                write_text_atomic(target, text)
                written[rel] = digest
            for rel in sorted(set(written) - set(plan.files)):
                (root / rel).unlink(missing_ok=True)
                written.pop(rel, None)
                _prune_empty(root, (root / rel).parent)
            self._written = written
            write_text_atomic(root / VARIANTS_NAME, json.dumps(plan.details, indent=1, sort_keys=True) + "\n")
            write_index(root, plan.rows)
            self.last_flush_error = None
        except Exception as exc:  # noqa: BLE001 - record and carry on; the next flush retries
            self.last_flush_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.flushes += 1
            self.flush_seconds += time.perf_counter() - started
        return root

    # -- numbers ------------------------------------------------------------------

    def stats(self) -> dict:
        return {
            "compile_events": self.compile_events,
            "cache_hit_events": self.cache_hit_events,
            "variants": len(self.variants),
            "shapes": sorted(s for s, c in self._shape_counts.items() if c),
            "current_shape": self._shape,
            "launches_counted": sum(sum(c.values()) for c in self._shape_counts.values()),
            "sweep_launches": sum(self._apart_counts.get(SWEEP, {}).values()),
            "harness_launches": sum(self._apart_counts.get(HARNESS, {}).values()),
            "flushes": self.flushes,
            "flush_seconds": round(self.flush_seconds, 6),
            "last_flush_error": self.last_flush_error,
            "listener_errors": self.listener_errors,
            "hook_ns_per_call": self.hook_ns_per_call,
        }


def _function_of(metadata: Any) -> Any:
    if isinstance(metadata, Mapping):
        return metadata.get("function")
    return getattr(metadata, "function", None)


def _prune_empty(root: Path, directory: Path) -> None:
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


# -- the process-wide recorder and the API other plugins call ---------------------

_RECORDER = TtgirRecorder()


def get_recorder() -> TtgirRecorder:
    return _RECORDER


def set_current_shape(label: str) -> None:
    """File subsequent launches under ``label`` (e.g. ``float16_1024x1024``); cheap, no I/O
    unless the TTGIR plugin is active (then the previous shapes are flushed)."""
    _RECORDER.set_current_shape(label)


def current_shape() -> str:
    return _RECORDER.current_shape


def recorder_stats() -> dict:
    """Counters of the process-wide recorder (launches counted, flush time, hook cost...)."""
    return _RECORDER.stats()
