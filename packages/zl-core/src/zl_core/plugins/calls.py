"""Loading the ``zl`` entry points and calling their hooks in isolation.

Entry points of the group ``zl`` are loaded one by one; a package that fails to
import or register is recorded with its reason and never takes the others down.
``ZL_DISABLE_PLUGINS=name,...`` skips entry points by entry-point or
distribution name.

Hooks are called one implementation at a time (in pluggy's order: last
registered first), never through ``pm.hook.*`` directly: a plugin whose hook
raises - anything, ``SystemExit`` included - is marked broken with the reason,
its answer is skipped, and the other plugins still answer. Every call of a hook
in zl goes through :class:`PluginCalls`.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import attrs
import pluggy

from zl_core.foundation import bounded, interrupts
from zl_core.foundation.markers import ENTRY_POINT_GROUP, PROJECT
from zl_core.plugins import hookspecs

log = logging.getLogger(__name__)

_Host = TypeVar("_Host", bound="PluginCalls")

#: What a plugin's isolation never catches: zl's own interrupt. (While zl handles signals
#: a Ctrl-C arrives as that; a KeyboardInterrupt there is raised by the plugin's own code.)
_ZL_OWN = (interrupts.Interrupted,)

DISABLE_ENV = "ZL_DISABLE_PLUGINS"


@attrs.frozen(kw_only=True)
class PluginRecord:
    """One entry point as the host saw it."""

    name: str
    package: str
    version: str
    status: str  # "loaded" | "failed" (at import) | "broken" (a hook raised) | "disabled"
    reason: str = ""


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


class PluginCalls:
    """The plugin manager, the entry points it loaded and what went wrong with them;
    hooks are asked through :meth:`_answers`, :meth:`_items` and :meth:`_first` only."""

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._records: list[PluginRecord] = []
        self._origin: dict[str, tuple[str, str]] = {}  # plugin name -> (package, version)
        self._problems_at_load: list[str] = []
        self._hook_problems: list[str] = []
        self._hung: set[str] = set()  # plugins with a hook that did not return in time

    def _forget_answers(self) -> None:
        """What a subclass derived from the plugins' answers is stale (a plugin came or went)."""

    # -- loading -----------------------------------------------------------------

    @classmethod
    def load(cls: type[_Host], entry_points: Iterable[md.EntryPoint] | None = None) -> _Host:  # noqa: PYI019 - typing.Self needs 3.11
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
        self._forget_answers()

    def unregister(self, name: str) -> None:
        self._pm.unregister(name=name)
        self._origin.pop(name, None)
        self._records = [r for r in self._records if r.name != name]
        self._forget_answers()

    @property
    def plugins(self) -> list[PluginRecord]:
        return list(self._records)

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
                answer = bounded.call_within(bounded.plugin_timeout(), functools.partial(impl.function, *args),
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


