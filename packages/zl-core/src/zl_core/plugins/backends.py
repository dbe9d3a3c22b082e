"""What the host asks backend plugins: the registered backends, their devices, graph
capture errors, telemetry and compat plugins (every call through :class:`PluginCalls`)."""

from __future__ import annotations

import importlib
import logging
import shutil
from collections.abc import MutableMapping, Sequence
from typing import Any

import attrs

from zl_core.foundation.backend import TELEMETRY_COLUMNS, Backend, TelemetryReading
from zl_core.foundation.errors import NoDeviceError, UnknownBackendError, UsageError
from zl_core.plugins import visibility
from zl_core.plugins.calls import DISABLE_ENV, PluginCalls, _reason, _str_dict, _str_dicts, _str_list

log = logging.getLogger(__name__)

CAPTURE_CLASSES = ("fatal", "poisoned", "recoverable")


@attrs.frozen(kw_only=True)
class RegisteredBackend:
    backend: Backend
    plugin: str
    package: str
    version: str


def _telemetry_rows(answer: Any) -> list[dict[str, str]]:
    """Rows of the common telemetry columns, every value a string ("" where none)."""
    return [{col: "" if row.get(col) is None else str(row.get(col)) for col in TELEMETRY_COLUMNS}
            for row in answer]


class BackendQueries(PluginCalls):
    """The backends the plugins declare and every question asked of a backend's plugins."""

    def __init__(self) -> None:
        super().__init__()
        self._backends: dict[str, RegisteredBackend] | None = None
        self._problems: list[str] = []

    def _forget_answers(self) -> None:
        self._backends = None

    @property
    def problems(self) -> list[str]:
        """Non-fatal oddities seen while collecting answers (duplicate names, a hook
        that raised...), each naming the plugin."""
        self._registry()
        return list(dict.fromkeys([*self._problems_at_load, *self._problems, *self._hook_problems]))

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
        from zl_core.foundation.vendor_tools import check_tool

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
        (:mod:`zl_core.plugins.visibility`)."""
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


