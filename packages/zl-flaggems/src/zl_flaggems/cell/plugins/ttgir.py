"""pytest plugin: dump the TTGIR of every kernel variant launched, per (shape, kernel).

Load with ``-p zl_flaggems.cell.plugins.ttgir`` in a cell process; without
``ZL_CELL_DIR`` it does nothing. Output: ``<cell>/ttgir/<shape>/<kernel>/<variant>.ttgir``
plus ``index.tsv`` (zl_core.interface.ttgir_layout) and ``variants.json`` (full parameters).

Hooks used (Triton 3.4-3.6; each one optional, missing ones degrade to a note):

* ``triton.knobs.compilation.listener`` (chained after any existing listener):
  TTGIR text and naming parameters per kernel hash. It also fires on cache hits.
* ``knobs.runtime.kernel_load_end_hook`` (3.5+): function handle -> hash. On 3.4,
  handles are resolved at flush time from the live ``CompiledKernel`` objects.
* ``knobs.runtime.launch_enter_hook`` (a HookChain in 3.5+, a plain attribute in
  3.4): one dict increment per launch, see :mod:`zl_flaggems.cell.ttgir_recorder` for
  why counting stays in the launch path and what it costs.
* ``Autotuner._bench`` and the drivers' ``clear_cache`` are wrapped so autotune
  benchmarking and do_bench's L2 clearing (a FlagGems fill kernel) count apart.

The dump is rewritten after every test, whenever the current shape changes
(:func:`zl_flaggems.cell.ttgir_recorder.set_current_shape`), at session end, at exit
and on SIGTERM; a hard crash loses at most the current shape.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from zl_core.interface import contract, phases
from zl_core.interface.ttgir_layout import TTGIR_DIR

from zl_flaggems.cell import crashsafe, phase_clock
from zl_flaggems.cell.ttgir_hook_cost import measure_hook_cost
from zl_flaggems.cell.ttgir_recorder import TtgirRecorder, get_recorder
from zl_flaggems.common import gems_env

_ACTIVE: TritonHooks | None = None


class TritonHooks:
    """Installs one recorder's hooks into the running Triton and takes them out again."""

    def __init__(self, recorder: TtgirRecorder):
        self.recorder = recorder
        self._undo: list[Any] = []
        self._chain: Any = None
        self.notes: list[str] = []

    @contextmanager
    def launch_counting_paused(self) -> Iterator[None]:
        """Detach the launch hook for a block (e.g. a timing plugin's timed loop).

        Launches inside are not counted; a kernel still shows up for a shape if it
        also ran outside the block (a warm-up call). Only for HookChain Tritons.
        """
        chain, hook = self._chain, self.recorder.launch_hook
        attached = chain is not None and hook in chain.calls
        if attached:
            chain.remove(hook)
        try:
            yield
        finally:
            if attached:
                chain.add(hook)

    def install(self) -> bool:
        """True when at least the compilation listener is in place."""
        try:
            from triton import knobs
        except Exception as exc:  # noqa: BLE001 - Triton < 3.4 or no Triton at all
            self.notes.append(f"triton.knobs unavailable ({type(exc).__name__}: {exc})")
            return False
        recorder = self.recorder
        compilation = getattr(knobs, "compilation", None)
        if compilation is None or not hasattr(compilation, "listener"):
            self.notes.append("this Triton has no compilation listener")
            return False
        previous = compilation.listener

        def zl_ttgir_listener(*, src, metadata, metadata_group, times, cache_hit):
            try:
                recorder.on_compile(src=src, metadata=metadata, metadata_group=metadata_group,
                                    times=times, cache_hit=cache_hit)
            except Exception:  # noqa: BLE001 - never break a compile for bookkeeping
                recorder.listener_errors += 1
            if previous is not None:
                previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                         cache_hit=cache_hit)

        compilation.listener = zl_ttgir_listener

        def undo_listener():
            if compilation.listener is zl_ttgir_listener:
                compilation.listener = previous

        self._undo.append(undo_listener)
        runtime = getattr(knobs, "runtime", None)
        if os.environ.get(contract.TTGIR_LAUNCH_HOOK, "1").strip() != "0":
            self._install_launch_hook(runtime)
        else:  # diagnostic only (overhead measurement): launches are not counted, so nothing is dumped
            self.notes.append("launch hook disabled by ZL_TTGIR_LAUNCH_HOOK=0")
        self._install_load_hook(runtime)
        self._install_sweep_marker()
        self._install_harness_marker()
        return True

    def _install_launch_hook(self, runtime: Any) -> None:
        hook = self.recorder.launch_hook
        chain = getattr(runtime, "launch_enter_hook", None) if runtime is not None else None
        if chain is not None and hasattr(chain, "add") and hasattr(chain, "remove"):  # 3.5+: HookChain
            chain.add(hook)
            self._chain = chain
            self._undo.append(lambda: chain.remove(hook))
            return
        if runtime is None or not hasattr(runtime, "launch_enter_hook"):
            self.notes.append("no launch hook: launches are not counted")
            return
        previous = chain  # 3.4: a single optional callable

        if previous is None:
            installed = hook
        else:
            def installed(metadata, _first=previous, _second=hook):
                _first(metadata)
                _second(metadata)

        runtime.launch_enter_hook = installed

        def undo():
            if runtime.launch_enter_hook is installed:
                runtime.launch_enter_hook = previous

        self._undo.append(undo)

    def _install_load_hook(self, runtime: Any) -> None:
        chain = getattr(runtime, "kernel_load_end_hook", None) if runtime is not None else None
        if chain is not None and hasattr(chain, "add") and hasattr(chain, "remove"):
            on_load = self.recorder.on_load
            chain.add(on_load)
            self._undo.append(lambda: chain.remove(on_load))
        # Without the hook (3.4), or for kernels loaded before install, resolve lazily.
        self.recorder.resolver = _scan_compiled_kernels(self.recorder)

    def _install_sweep_marker(self) -> None:
        try:
            from triton.runtime.autotuner import Autotuner
        except Exception as exc:  # noqa: BLE001 - said in the identity: sweep launches count as shapes'
            self.notes.append(f"no autotune sweep marker ({type(exc).__name__}: {exc})")
            return
        original = Autotuner.__dict__.get("_bench")
        if original is None:
            return
        recorder = self.recorder

        def _bench(self, *args, **kwargs):
            with recorder.sweep():
                return original(self, *args, **kwargs)

        _bench.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps sets it
        Autotuner._bench = _bench

        def undo():
            if Autotuner.__dict__.get("_bench") is _bench:
                Autotuner._bench = original

        self._undo.append(undo)

    def _install_harness_marker(self) -> None:
        """Wrap each backend driver's ``clear_cache`` (called by ``do_bench`` before every
        timed iteration, outside the timed events) so its launches are counted apart.
        Classes are patched, so no driver is instantiated early."""
        try:
            from triton.backends import backends
        except Exception as exc:  # noqa: BLE001 - said in the identity: harness launches count as shapes'
            self.notes.append(f"no harness marker ({type(exc).__name__}: {exc})")
            return
        recorder = self.recorder
        for backend in backends.values():
            cls = getattr(backend, "driver", None)
            original = getattr(cls, "__dict__", {}).get("clear_cache")
            if cls is None or not callable(original):
                continue

            def clear_cache(self, *args, _original=original, **kwargs):
                with recorder.harness():
                    return _original(self, *args, **kwargs)

            clear_cache.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps sets it
            cls.clear_cache = clear_cache

            def undo(cls=cls, original=original, installed=clear_cache):
                if cls.__dict__.get("clear_cache") is installed:
                    cls.clear_cache = original

            self._undo.append(undo)

    def uninstall(self) -> None:
        while self._undo:
            try:
                self._undo.pop()()
            except Exception:  # noqa: BLE001 - undo the rest even if one step fails
                pass
        self.recorder.resolver = None


def _scan_compiled_kernels(recorder: TtgirRecorder):
    def resolve() -> None:
        try:
            from triton.compiler.compiler import CompiledKernel
        except Exception:  # noqa: BLE001 - the load hook resolves them instead; this is its fallback
            return
        for obj in gc.get_objects():
            if (isinstance(obj, CompiledKernel) and getattr(obj, "function", None) is not None
                    and obj.function not in recorder.fn_to_hash):
                recorder.on_load(getattr(obj, "module", None), obj.function, obj.name,
                                 getattr(obj, "metadata_group", {}) or {}, obj.hash)

    return resolve


def _backend_refuses_hooks() -> str | None:
    name = os.environ.get(contract.BACKEND, "").strip()
    if not name:
        return None
    try:
        from zl_core import plugin_host

        backend = plugin_host().get_backend(name)
    except Exception:  # noqa: BLE001 - an unknown backend is core's problem, not the dump's
        return None
    if not backend.triton_hooks:
        return f"backend {backend.name} declares no Triton hooks"
    return None


def _merge_identity(updates: dict) -> None:
    cell = Path(os.environ.get(contract.CELL_DIR, ""))
    try:
        from zl_core.interface.caliber import IDENTITY_NAME, merge_identity

        if (cell / IDENTITY_NAME).is_file():
            merge_identity(cell, updates)
    except Exception:  # noqa: BLE001 - identity extras are informative only
        pass


def _emit(config: Any, line: str) -> None:
    from zl_flaggems.cell.emitter import Emitter

    Emitter(config).emit(line, err=True)


def ttgir_root() -> Path:
    return Path(os.environ[contract.CELL_DIR]) / TTGIR_DIR


def flush() -> None:
    """Write the dump now (no-op when the plugin is not active)."""
    if _ACTIVE is not None:
        with phase_clock.phase(phases.IR_DUMP):
            _ACTIVE.recorder.flush(ttgir_root())


def launch_counting_paused() -> Any:
    """Context manager: no launch counting inside (no-op when the plugin is not active)."""
    return _ACTIVE.launch_counting_paused() if _ACTIVE is not None else nullcontext()


def _flush_on_shape(_label: str) -> None:
    flush()


# -- pytest hooks -------------------------------------------------------------------


def pytest_configure(config: Any) -> None:
    global _ACTIVE
    if not os.environ.get(contract.CELL_DIR, "").strip() or _ACTIVE is not None:
        return
    reason = _backend_refuses_hooks()
    recorder = get_recorder()
    recorder.dump_unlaunched = os.environ.get(contract.COMPILE_ONLY, "").strip() == "1"
    # Per-cell directories whose paths end up in loc(...) of generated kernels.
    recorder.alias_paths({name: os.environ.get(name) for name in
                          (gems_env.CACHE_DIR, "TRITON_CACHE_DIR", contract.CELL_DIR)})
    hooks = TritonHooks(recorder)
    if reason is None and not hooks.install():
        reason = "; ".join(hooks.notes)
    if reason is not None:
        hooks.uninstall()
        _emit(config, f"zl ttgir: IR collection disabled: {reason}")
        _merge_identity({"ttgir_collection": f"off: {reason}"})
        return
    recorder.hook_ns_per_call = round(measure_hook_cost(), 1)
    _ACTIVE = hooks
    recorder.add_shape_listener(_flush_on_shape)
    crashsafe.register(flush)
    _merge_identity({"ttgir_collection": "on" + (f" ({'; '.join(hooks.notes)})" if hooks.notes else "")})


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    flush()


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    if _ACTIVE is None:
        return
    flush()
    _merge_identity({"ttgir_stats": _ACTIVE.recorder.stats()})


def pytest_unconfigure(config: Any) -> None:
    global _ACTIVE
    hooks = _ACTIVE
    if hooks is None:
        return
    flush()
    hooks.uninstall()
    hooks.recorder.remove_shape_listener(_flush_on_shape)
    crashsafe.unregister(flush)
    _ACTIVE = None
