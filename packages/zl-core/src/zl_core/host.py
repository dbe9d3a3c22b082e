"""The plugin host: the one place that calls ``pm.hook.*``.

Entry points of the group ``zl`` are loaded one by one; a package that fails to
import or register is recorded with its reason and never takes the others down.
``ZL_DISABLE_PLUGINS=name,...`` skips entry points by entry-point or
distribution name.

Hooks are called one implementation at a time (in pluggy's order: last
registered first), never through ``pm.hook.*`` directly: a plugin whose hook
raises - anything, ``SystemExit`` included - is marked broken with the reason,
its answer is skipped, and the other plugins still answer.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import inspect
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import attrs
import pluggy

from zl_core import bounded, hookspecs, interrupts, visibility
from zl_core._markers import ENTRY_POINT_GROUP, PROJECT
from zl_core.backend import TELEMETRY_COLUMNS, Backend, TelemetryReading
from zl_core.errors import NoDeviceError, UnknownBackendError, UnknownProviderError, UsageError
from zl_core.provider import Provider

log = logging.getLogger(__name__)

#: What a plugin's isolation never catches: zl's own interrupt. (While zl handles signals
#: a Ctrl-C arrives as that; a KeyboardInterrupt there is raised by the plugin's own code.)
_ZL_OWN = (interrupts.Interrupted,)

DISABLE_ENV = "ZL_DISABLE_PLUGINS"
CAPTURE_CLASSES = ("fatal", "poisoned", "recoverable")


@attrs.frozen(kw_only=True)
class PluginRecord:
    """One entry point as the host saw it."""

    name: str
    package: str
    version: str
    status: str  # "loaded" | "failed" (at import) | "broken" (a hook raised) | "disabled"
    reason: str = ""


@attrs.frozen(kw_only=True)
class RegisteredBackend:
    backend: Backend
    plugin: str
    package: str
    version: str


def _reason(exc: BaseException) -> str:
    """One line naming the exception: ``SystemExit: 7``, ``ImportError: libfoo.so ...``."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300].rstrip(": ") if text else type(exc).__name__


def _disabled_names() -> set[str]:
    raw = os.environ.get(DISABLE_ENV, "")
    return {n.strip().lower() for n in raw.split(",") if n.strip()}


#: Called with each new plugin problem (one line naming the plugin and the hook) as it
#: happens, so a long campaign says so at once; the command line adds a printer.
PROBLEM_LISTENERS: list[Callable[[str], None]] = []


def _telemetry_rows(answer: Any) -> list[dict[str, str]]:
    """Rows of the common telemetry columns, every value a string ("" where none)."""
    return [{col: "" if row.get(col) is None else str(row.get(col)) for col in TELEMETRY_COLUMNS}
            for row in answer]


class PluginHost:
    """Typed facade over the ``zl`` plugin manager."""

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._records: list[PluginRecord] = []
        self._origin: dict[str, tuple[str, str]] = {}  # plugin name -> (package, version)
        self._backends: dict[str, RegisteredBackend] | None = None
        self._problems: list[str] = []
        self._problems_at_load: list[str] = []
        self._hook_problems: list[str] = []
        self._hung: set[str] = set()  # plugins with a hook that did not return in time

    # -- loading -----------------------------------------------------------------

    @classmethod
    def load(cls, entry_points: Iterable[md.EntryPoint] | None = None) -> PluginHost:
        """A host with every installed ``zl`` entry point loaded (or the given ones)."""
        host = cls()
        eps = entry_points if entry_points is not None else md.entry_points(group=ENTRY_POINT_GROUP)
        disabled = _disabled_names()
        try:
            ordered = sorted(eps, key=lambda e: e.name)
        except Exception as exc:  # noqa: BLE001 - unreadable package metadata: load nothing, say why
            host._problems_at_load.append(f"cannot list the {ENTRY_POINT_GROUP!r} entry points: {_reason(exc)}")
            ordered = []
        for ep in ordered:
            host._load_entry_point(ep, disabled)
        return host

    def _load_entry_point(self, ep: md.EntryPoint, disabled: set[str]) -> None:
        dist = getattr(ep, "dist", None)
        package = dist.name if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        if ep.name.lower() in disabled or package.lower() in disabled:
            log.debug("plugin %s (%s %s): disabled by %s", ep.name, package, version, DISABLE_ENV)
            self._records.append(PluginRecord(name=ep.name, package=package, version=version,
                                              status="disabled", reason=f"listed in {DISABLE_ENV}"))
            return
        try:
            plugin = bounded.call_within(bounded.plugin_timeout(), ep.load, name=f"zl-import-{ep.name}")
            self._pm.register(plugin, name=ep.name)
        except bounded.Hung as exc:
            log.debug("plugin %s (%s %s): its import %s", ep.name, package, version, exc)
            self._records.append(PluginRecord(name=ep.name, package=package, version=version,
                                              status="failed", reason=f"its import {exc}"))
            return
        except _ZL_OWN:
            raise  # zl's own interrupt (a signal) is never the plugin's failure
        except BaseException as exc:  # noqa: BLE001 - import code may even sys.exit(); it stays that plugin's failure
            log.debug("plugin %s (%s %s): failed at import: %s", ep.name, package, version, _reason(exc))
            self._records.append(PluginRecord(name=ep.name, package=package, version=version,
                                              status="failed", reason=_reason(exc)))
            return
        self._origin[ep.name] = (package, version)
        log.debug("plugin %s loaded: %s from %s %s", ep.name, ep.value, package, version)
        self._records.append(PluginRecord(name=ep.name, package=package, version=version,
                                          status="loaded"))

    def register(self, plugin: object, name: str, package: str = "(registered)",
                 version: str = "") -> None:
        """Register a plugin object directly (tests, embedding programs)."""
        self._pm.register(plugin, name=name)
        self._origin[name] = (package, version)
        self._records.append(PluginRecord(name=name, package=package, version=version,
                                          status="loaded"))
        self._backends = None

    def unregister(self, name: str) -> None:
        self._pm.unregister(name=name)
        self._origin.pop(name, None)
        self._records = [r for r in self._records if r.name != name]
        self._backends = None

    @property
    def plugins(self) -> list[PluginRecord]:
        return list(self._records)

    @property
    def problems(self) -> list[str]:
        """Non-fatal oddities seen while collecting answers (duplicate names, a hook
        that raised...), each naming the plugin."""
        self._registry()
        return list(dict.fromkeys([*self._problems_at_load, *self._problems, *self._hook_problems]))

    # -- calling hooks, one plugin at a time ---------------------------------------

    def _broken(self, plugin: str, hook: str, why: str) -> None:
        """Record that ``plugin`` failed in ``hook``; its record turns "broken"; the
        first time, :data:`PROBLEM_LISTENERS` hear of it (the command line prints it)."""
        problem = f"plugin {plugin}: {hook} {why}"
        if problem not in self._hook_problems:
            self._hook_problems.append(problem)
            for listener in PROBLEM_LISTENERS:
                listener(problem)
        for i, record in enumerate(self._records):
            if record.name == plugin and record.status == "loaded":
                self._records[i] = attrs.evolve(record, status="broken", reason=f"{hook} {why}")

    def _answers(self, hook: str, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        """``(plugin, answer)`` of each implementation of ``hook``, in pluggy's call
        order (last registered first), skipping None; lazily, so a firstresult
        caller asks no further than the answer it takes.

        An implementation that raises is recorded (:meth:`_broken`) and skipped.
        Hook wrappers are not called: zl's hooks are plain answers.
        """
        for impl in reversed(getattr(self._pm.hook, hook).get_hookimpls()):
            if impl.plugin_name in self._hung:
                continue
            if impl.hookwrapper or getattr(impl, "wrapper", False):
                self._broken(impl.plugin_name, hook, "is a hook wrapper, which zl does not call")
                continue
            args = [kwargs[name] for name in impl.argnames]
            try:
                answer = bounded.call_within(bounded.plugin_timeout(),
                                             lambda impl=impl, args=args: impl.function(*args),
                                             name=f"zl-hook-{impl.plugin_name}")
            except bounded.Hung as exc:
                # Its thread may never return: the plugin is not asked again.
                self._hung.add(impl.plugin_name)
                self._broken(impl.plugin_name, hook, f"{exc}; not asked again")
                continue
            except _ZL_OWN:
                raise
            except BaseException as exc:  # noqa: BLE001 - one plugin's failure must not take zl down
                self._broken(impl.plugin_name, hook, f"raised {_reason(exc)}")
                continue
            if answer is not None:
                yield impl.plugin_name, answer

    def _items(self, hook: str, kind: type) -> Iterator[tuple[str, Any]]:
        """``(plugin, item)`` for every ``kind`` item the implementations of a
        list-returning hook answer, in registration order (so a later registration can
        replace an earlier one of the same name); an item of another type is recorded
        as that plugin's fault and skipped."""
        for plugin, answer in reversed(list(self._answers(hook))):
            try:
                answer = list(answer)
            except TypeError:
                answer = [answer]
            for item in answer:
                if isinstance(item, kind):
                    yield plugin, item
                else:
                    self._broken(plugin, hook, f"returned {type(item).__name__}, not {kind.__name__}")

    def _first(self, hook: str, check: Any, what: str, **kwargs: Any) -> Any:
        """The first answer of a firstresult hook that passes ``check``; an answer
        that does not is recorded as that plugin's fault and the next one is asked."""
        for plugin, answer in self._answers(hook, **kwargs):
            try:
                return check(answer)
            except Exception:  # noqa: BLE001 - a malformed answer is the plugin's fault
                self._broken(plugin, hook, f"returned {type(answer).__name__}, not {what}")
        return None

    def health(self) -> list[str]:
        """Ask every hook of every backend once, with harmless arguments, so that a
        plugin whose hooks raise shows as broken (``zl backends``); the problems."""
        probe = RuntimeError("zl health check")
        for backend in self.backends():
            self.probe_devices(backend)
            self.telemetry_command(backend, None)
            self.sample_telemetry(backend, None)
            self.parse_telemetry(backend, "")
            self.classify_capture_error(backend, probe)
            self.compat_plugins(backend)
        self.providers()
        return self.problems

    # -- discovery ---------------------------------------------------------------

    def _registry(self) -> dict[str, RegisteredBackend]:
        if self._backends is not None:
            return self._backends
        found: dict[str, RegisteredBackend] = {}
        self._problems = []
        # Call each implementation separately so the answer can be traced to its
        # package. get_hookimpls() lists them in registration order (pluggy *calls*
        # them last-registered-first), so a later registration overwrites an earlier
        # one of the same name, as it would win a firstresult hook.
        for plugin, backend in self._items("zl_backends", Backend):
            package, version = self._origin.get(plugin, ("?", ""))
            if backend.name in found:
                self._problems.append(
                    f"backend {backend.name!r} from {package} overrides the one from "
                    f"{found[backend.name].package}")
            found[backend.name] = RegisteredBackend(backend=backend, plugin=plugin,
                                                    package=package, version=version)
        self._backends = found
        return found

    def backends(self) -> list[Backend]:
        """Every registered backend, sorted by name."""
        return [r.backend for _, r in sorted(self._registry().items())]

    def backend_origin(self, backend: Backend) -> RegisteredBackend:
        return self._registry()[backend.name]

    def known_names(self) -> dict[str, tuple[str, ...]]:
        return {name: r.backend.aliases for name, r in self._registry().items()}

    def tool_problem(self, backend: Backend, timeout_s: float) -> str:
        """Why the backend's vendor tool (its telemetry command) is on PATH yet does not
        answer, asked once within ``timeout_s``; "" when it answers or is not installed."""
        from zl_core.vendor_tools import check_tool

        argv = self.telemetry_command(backend, None)
        if not argv or shutil.which(argv[0]) is None:
            return ""
        return check_tool(argv, timeout_s)

    def stopped_answering(self, backend: Backend) -> str:
        """Why the plugin that declared ``backend`` is no longer asked ("" when it is): one
        of its hooks hung, so none of its answers (device identity, the tool to ask) come."""
        reg = self._registry().get(backend.name)
        if reg is None or reg.plugin not in self._hung:
            return ""
        return next((p for p in self._hook_problems if p.startswith(f"plugin {reg.plugin}: ")),
                    f"plugin {reg.plugin} hung")

    def get_backend(self, name: str) -> Backend:
        """Resolve a name or alias; unknown names fail closed with the known list."""
        wanted = (name or "").strip().lower()
        registry = self._registry()
        if wanted in registry:
            return registry[wanted].backend
        for reg in registry.values():
            if wanted in (a.lower() for a in reg.backend.aliases):
                return reg.backend
        for record in self._records:  # installed, but not loaded: say so, not "install it"
            if wanted and (record.name.lower() == wanted or record.package.lower() == f"zl-backend-{wanted}"):
                if record.status == "disabled":
                    raise UsageError(f"backend {name!r} is installed ({record.package}) but disabled by "
                                     f"{DISABLE_ENV}; take {record.name} out of that variable to use it")
                if record.status == "failed":
                    raise UsageError(f"backend {name!r}: its package {record.package} failed to load "
                                     f"({record.reason}); 'zl backends' shows every plugin's state")
        raise UnknownBackendError(name, self.known_names())

    # -- devices -----------------------------------------------------------------

    def enumerate_devices(self, backend: Backend, explicit: Sequence[str] | None = None) -> list[str]:
        """Devices to use: explicit list > visibility variable > vendor probe > torch count.

        Devices are physical ids, as the user sees them: under
        ``CUDA_VISIBLE_DEVICES=5,6`` they are ``5`` and ``6``, and a cell pinned to
        ``5`` gets ``CUDA_VISIBLE_DEVICES=5`` (never the renumbered ``0``).
        """
        if explicit:
            return self._named_devices(backend, [str(d).strip() for d in explicit if str(d).strip()])
        mask = visibility.read_mask(backend)
        if mask is not None:
            visibility.check_present(backend, mask, self.probe_devices(backend))
            return list(mask.ids)
        answer = self.probe_devices(backend)
        if answer is not None:
            return answer
        return [str(i) for i in range(_torch_device_count(backend))]

    def visibility_mask(self, backend: Backend) -> list[str] | None:
        """The physical ids the caller's visibility variable allows, or None when unset;
        a mask that hides everything or that the runtime cannot read is refused
        (:mod:`zl_core.visibility`)."""
        mask = visibility.read_mask(backend)
        return None if mask is None else list(mask.ids)

    def _named_devices(self, backend: Backend, named: list[str]) -> list[str]:
        """The devices the user named, refused when the vendor's tool (asked with
        them) does not list them. Under a visibility mask the mask decides what
        exists, so the tool is not asked."""
        if not named or self.visibility_mask(backend) is not None:
            return named
        known = self.probe_devices(backend, explicit=named)
        missing = [d for d in named if known is not None and d not in known]
        if missing:
            raise NoDeviceError(f"no {backend.name} device {', '.join(missing)} on this machine "
                                f"(its tool lists {', '.join(known or []) or 'none'}); name one of those")
        return named

    def probe_devices(self, backend: Backend, explicit: Sequence[str] | None = None) -> list[str] | None:
        """Devices the vendor's own tool reports, or None when it has no answer.

        Unlike :meth:`enumerate_devices` this never falls back to the torch
        namespace, which several backends may share (ROCm's torch is torch.cuda),
        so it can tell which vendor's hardware is really present.
        """
        return self._first("zl_enumerate_devices", _str_list, "a list of device indices",
                           backend=backend, explicit=list(explicit) if explicit else None)

    def device_identity(self, backend: Backend, device: str | None = None) -> dict[str, str]:
        answer = self._first("zl_device_identity", _str_dict, "a mapping",
                             backend=backend, device=device)
        return answer or {}

    def device_processes(self, backend: Backend, device: str | None = None) -> list[dict[str, str]] | None:
        """The processes using ``device`` (``pid``, ``name``, maybe ``used_mib``); None
        when no plugin of the backend can tell."""
        return self._first("zl_device_processes", _str_dicts, "a list of mappings",
                           backend=backend, device=device)

    def apply_visibility(self, backend: Backend, env: MutableMapping[str, str],
                         device: str | None) -> MutableMapping[str, str]:
        """Pin ``device`` for ``backend`` in ``env`` and clear every other vendor's keys."""
        own = set(backend.visibility_env_keys)
        for other in self.backends():
            for key in other.visibility_env_keys:
                if key not in own:
                    env.pop(key, None)
        if device is not None:
            for key in backend.visibility_env_keys:
                env[key] = str(device)
        return env

    # -- graph capture -------------------------------------------------------------

    def classify_capture_error(self, backend: Backend, exc: BaseException) -> str:
        """``fatal`` | ``poisoned`` | ``recoverable``; recoverable when no plugin knows."""
        answer = self._first("zl_classify_capture_error", str, "a class name",
                             backend=backend, exc=exc)
        return answer if answer in CAPTURE_CLASSES else "recoverable"

    # -- telemetry -------------------------------------------------------------------

    def telemetry_command(self, backend: Backend, device: str | None = None) -> list[str] | None:
        answer = self._first("zl_telemetry_command", _str_list, "an argv list",
                             backend=backend, device=device)
        return answer or None

    def parse_telemetry(self, backend: Backend, raw: str) -> list[dict[str, str]]:
        return self._first("zl_parse_telemetry", _telemetry_rows, "a list of row mappings",
                           backend=backend, raw=raw) or []

    def sample_telemetry(self, backend: Backend, device: str | None = None) -> TelemetryReading | None:
        """A sample a plugin took in-process (its rows in the common columns), one that
        says why its library cannot sample, or None: no in-process sampler."""
        def reading(answer: Any) -> TelemetryReading:
            if not isinstance(answer, TelemetryReading):
                raise TypeError(type(answer).__name__)
            return attrs.evolve(answer, rows=_telemetry_rows(answer.rows))

        return self._first("zl_sample_telemetry", reading, "a TelemetryReading",
                           backend=backend, device=device)

    # -- compatibility -----------------------------------------------------------------

    def compat_plugins(self, backend: Backend) -> list[str]:
        """Compat pytest plugins, in registration order, without duplicates."""
        seen: list[str] = []
        for plugin, answer in reversed(list(self._answers("zl_compat_plugins", backend=backend))):
            try:
                names = _str_list(answer)
            except Exception:  # noqa: BLE001 - a malformed answer is the plugin's fault
                self._broken(plugin, "zl_compat_plugins", f"returned {type(answer).__name__}, not a list")
                continue
            seen.extend(n for n in names if n not in seen)
        return seen

    # -- providers -------------------------------------------------------------------

    def providers(self) -> dict[str, Provider]:
        found: dict[str, Provider] = {}
        for _plugin, provider in self._items("zl_providers", Provider):
            found[provider.name] = adapt_provider(provider)
        return found

    def get_provider(self, name: str) -> Provider:
        providers = self.providers()
        if name in providers:
            return providers[name]
        known = ", ".join(sorted(providers)) or "none are installed (pip install zl-flaggems)"
        raise UnknownProviderError(f"unknown suite {name!r}; known suites: {known}")


#: Provider methods that gained a ``host`` argument (provider API 2): one written to API 1,
#: ``preflight(self, request)``, keeps working, called without it.
HOST_ARGUMENT = ("preflight", "cell_command")


def _takes_host(method: Any) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (len(positional) >= 2 or any(p.name == "host" for p in params)
            or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params))


def adapt_provider(provider: Provider) -> Provider:
    """``provider``, its API-1 methods (no ``host``) wrapped to take and drop it."""
    for name in HOST_ARGUMENT:
        method = getattr(provider, name)
        if not _takes_host(method):
            setattr(provider, name, lambda request, host=None, _method=method: _method(request))
    return provider


def _str_list(answer: Any) -> list[str]:
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise TypeError(type(answer).__name__)
    return [str(a) for a in answer]


def _str_dict(answer: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(answer).items()}


def _str_dicts(answer: Any) -> list[dict[str, str]] | None:
    if answer is None:
        return None
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        raise TypeError(type(answer).__name__)
    found = [_str_dict(a) for a in answer]
    if any("pid" not in a for a in found):
        raise TypeError("a process without its pid")
    return found


def _torch_device_count(backend: Backend) -> int:
    """Count devices through the torch namespace; 0 when torch or it is absent, and 0
    with a warning that says why when it is there but fails."""
    if not backend.torch_namespace:
        return 0
    try:
        torch = importlib.import_module("torch")
        if backend.torch_extension:
            importlib.import_module(backend.torch_extension)
        namespace: Any = getattr(torch, backend.torch_namespace, None)
        return int(namespace.device_count()) if namespace is not None else 0
    except ModuleNotFoundError:  # safe: no torch (or no vendor extension), no devices seen this way
        return 0
    except Exception as exc:  # noqa: BLE001 - a broken torch build: no devices seen this way, said
        log.warning("counting %s devices through torch.%s failed (%s); none are seen that way: "
                    "fix the torch install (zl doctor says what it finds)", backend.name,
                    backend.torch_namespace, _reason(exc))
        return 0


_HOST: PluginHost | None = None


def plugin_host(refresh: bool = False) -> PluginHost:
    """The process-wide host with every installed plugin loaded."""
    global _HOST
    if _HOST is None or refresh:
        _HOST = PluginHost.load()
    return _HOST


