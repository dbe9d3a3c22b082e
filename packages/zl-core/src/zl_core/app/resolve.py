"""From what the user named to what runs: suite, backend, device, operators, settings."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import attrs

from zl_core.campaigns.settings import CellSettings
from zl_core.cells import devicelock
from zl_core.foundation import targets
from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import BadInputError, NoDeviceError, UsageError
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import Provider
from zl_core.interface.sources import Sources, split_item
from zl_core.plugins.host import PluginHost

from .inputs import check_ops_offered
from .options import Measurement, Where

BACKEND_ENV = "ZL_BACKEND"
BUILTIN_SUITE = "builtin"

log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class Resolved:
    """Where a campaign's cells run, and how they measure, once every default is settled."""

    provider: Provider
    source: str | None  # the default source's checkout
    backend: Backend
    device: str | None
    measure: Measurement
    note: str = ""  # a line for the user about a default taken (the IR-only screen)
    sources: Sources = attrs.field(factory=Sources)  # every checkout, the default first
    ops: tuple[OpSpec, ...] = ()  # the operators named (``op_specs``), checked against the sources

    def __attrs_post_init__(self) -> None:
        if not self.sources.entries and self.source:
            object.__setattr__(self, "sources", Sources.single(
                self.source, self.provider.default_source_name))


def check_timeout(seconds: float) -> float:
    """A per-cell timeout is a finite number of seconds above 0 (nan would mean none)."""
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"--timeout {seconds!r} is not a number of seconds above 0; give one, "
                         "e.g. --timeout 600")
    return float(seconds)


def resolve(host: PluginHost, where: Where, measure: Measurement, *, what: str,
            local_device: bool = True, ir_only_without_device: bool = False,
            op_specs: tuple[str, ...] | list[str] | None = None) -> Resolved:
    """Suite, its checkout, compile-only check, backend and device; ``what`` names the
    command in hints.

    ``local_device=False`` (lanes name their own devices, a scheduler's are on other
    hosts) leaves the device unresolved. With ``ir_only_without_device`` (zl screen),
    a suite that compiles without a device runs the IR-only screen where no device is
    found and none was named, and ``note`` says so. ``op_specs`` (None: none to check)
    are resolved against the sources before any device is looked for, so a misspelt
    operator is named first (``ops``; empty specs: every operator).
    """
    check_timeout(measure.timeout_s)
    if not measure.compile_only:
        devicelock.check_lock_dir()  # a cell that cannot lock its device must not start
    provider, source = resolve_suite(host, where.suite, where.source)
    sources = resolve_sources(provider, where)
    for _, path in sources.entries:
        provider.check_source(path)  # a broken checkout: exit 3 before any cell
    ops = tuple(resolve_ops(provider, sources, op_specs)) if op_specs is not None else ()
    measure = check_compile_only(measure, provider, host, where.backend)
    try:
        backend = resolve_backend(host, where.backend, compile_target=measure.target)
        device = resolve_device(host, backend, where.device, compile_only=measure.compile_only,
                                what=what) if local_device else None
    except NoDeviceError as exc:
        broken = failing_tools(host, where.backend or os.environ.get(BACKEND_ENV))
        if broken:  # a device machine whose driver or tool is broken is not a CPU machine
            raise NoDeviceError(f"{str(exc).split(';')[0]}, and the vendor's tool is installed but "
                                f"failing ({'; '.join(broken)}); fix the driver or the tool "
                                "(zl doctor), or compare generated code only with --compile-only") from None
        if not (ir_only_without_device and local_device and where.device is None
                and not measure.compile_only and getattr(provider, "supports_compile_only", False)):
            raise
        measure = check_compile_only(attrs.evolve(measure, compile_only=True), provider, host,
                                     where.backend)
        backend = resolve_backend(host, where.backend, compile_target=measure.target)
        why = str(exc).split(";")[0]
        return _settled(what, Resolved(
            provider=provider, source=source, backend=backend, device=None, measure=measure,
            sources=sources, ops=ops, note=f"{why}: running the IR-only screen instead (TTGIR "
            f"compiled for {measure.target}, no latencies); timed cells need a device "
            "('zl doctor' says what is missing)"))
    if measure.sweep_devices:
        measure = attrs.evolve(measure, sweep_devices=",".join(
            resolve_sweep_devices(host, backend, provider, measure)))
    return _settled(what, Resolved(provider=provider, source=source, backend=backend, device=device,
                                   measure=measure, sources=sources, ops=ops))


def _settled(what: str, got: Resolved) -> Resolved:
    """``got``, said at debug level: every default the command took, in one place."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s: suite %s, sources %s, backend %s, device %s", what, got.provider.name,
                  dict(got.sources.entries) or "(packaged with the suite)", got.backend.name,
                  got.device if got.device is not None else "(per lane, or none)")
        log.debug("%s: settings %s", what, ", ".join(f"{k}={v}" for k, v in attrs.asdict(got.measure).items()))
        if got.ops:
            log.debug("%s: operators %s", what, " ".join(str(op) for op in got.ops))
    return got


def resolve_sources(provider: Provider, where: Where) -> Sources:
    """Every checkout the campaign reads, named (:mod:`zl_core.interface.sources`)."""
    first = where.source
    if first is None and provider.source_env:
        first = os.environ.get(provider.source_env) or None
    if not first or not provider.source_env:
        if where.more_sources:
            raise UsageError(f"the {provider.name} suite reads no checkout; drop the further "
                             "--source")
        return Sources()
    return Sources.resolve((first, *where.more_sources), provider.source_name,
                           provider.default_source_name)


def resolve_sweep_devices(host: PluginHost, backend: Backend, provider: Provider,
                          measure: Measurement) -> list[str]:
    """``--sweep-devices``: ``all`` or ``0,1,...`` as physical ids; a device named twice
    takes two shards, one after the other."""
    spec = measure.sweep_devices.strip()
    if measure.compile_only:
        raise UsageError("--sweep-devices shards an autotune sweep; compile-only cells tune nothing")
    if not provider.supports_sweep_shards:
        raise UsageError(f"suite {provider.name} cannot shard a sweep; drop --sweep-devices")
    if spec.lower() == "all":
        devices = host.enumerate_devices(backend)
    else:
        devices = [d.strip() for d in spec.split(",") if d.strip()]
        mask = host.visibility_mask(backend)
        outside = [d for d in devices if mask is not None and d not in mask]
        if outside:
            raise UsageError(f"--sweep-devices: device(s) {', '.join(outside)} are hidden by the "
                             f"visibility mask ({', '.join(mask or [])}); pick among those")
        host.enumerate_devices(backend, list(dict.fromkeys(devices)))  # refuses one not there
    if len(devices) < 2:
        raise UsageError(f"--sweep-devices {spec}: a sharded sweep needs two devices or more "
                         f"(found {len(devices)}); drop it to sweep on the cell's own device")
    return devices


#: How long a vendor's tool gets to say why no device was found (a healthy nvidia-smi
#: answers in well under a second).
TOOL_CHECK_S = 15.0


def failing_tools(host: PluginHost, name: str | None) -> list[str]:
    """``<backend>: why`` for each backend (the named one, else every installed one)
    whose vendor tool is on PATH but does not answer: a failing tool means a machine
    whose devices zl cannot see, which must never pass for a machine without any."""
    try:
        backends = [host.get_backend(name)] if name else host.backends()
    except UsageError:
        return []
    return [f"{backend.name}: {why}" for backend in backends
            if (why := host.tool_problem(backend, TOOL_CHECK_S))]


def resolve_backend(host: PluginHost, name: str | None, *, compile_target: str | None = None) -> Backend:
    wanted = name or os.environ.get(BACKEND_ENV)
    if wanted:
        return host.get_backend(wanted)
    backends = host.backends()
    if not backends:
        raise UsageError("no backend is installed; pip install the zl-backend-<vendor> package "
                         "of your accelerator and see 'zl backends'")
    if len(backends) == 1:
        return backends[0]
    if compile_target:
        return targets.resolve(compile_target, backends)[0]
    # Ask each vendor's own tool first: torch namespaces are shared between
    # backends (ROCm builds expose torch.cuda), so a torch count cannot tell them apart.
    probed = [b for b in backends if host.probe_devices(b)]
    if len(probed) == 1:
        return probed[0]
    names = ", ".join(b.name for b in backends)
    if not probed and not any(host.enumerate_devices(b) for b in backends):
        raise NoDeviceError(
            f"no device found by any installed backend ({names}); to compare generated code "
            "without a device run an IR-only screen: zl screen --compile-only --switch "
            f"DISABLE_MMA_V3 [--target {targets.expected(backends)}] (nox -s screen -- --switch "
            "DISABLE_MMA_V3), or name a backend with --backend")
    raise UsageError(f"several backends are installed ({names}); pick one with --backend "
                     f"or ${BACKEND_ENV}")


def resolve_suite(host: PluginHost, suite: str | None, source: str | None) -> tuple[Provider, str | None]:
    """(provider, source): a checkout, given or named by the variable of the provider
    that runs from checkouts (:attr:`Provider.source_env`), selects that provider;
    else the builtin suite."""
    providers = host.providers()
    from_checkout = next((p for _, p in sorted(providers.items()) if p.source_env), None)
    if source is None and from_checkout is not None:
        source = os.environ.get(from_checkout.source_env) or None
    if suite is None:
        suite = from_checkout.name if source and from_checkout is not None else BUILTIN_SUITE
    provider = host.get_provider(suite)
    if provider.source_env:
        if not source:
            raise UsageError(f"the {provider.name} suite needs a checkout: pass --source DIR "
                             f"or set ${provider.source_env}")
        return provider, str(Path(split_item(source)[1]).expanduser().resolve())
    return provider, None


def resolve_device(host: PluginHost, backend: Backend, device: str | None, *,
                   compile_only: bool, what: str) -> str | None:
    if compile_only:
        return None
    if device is not None:
        return host.enumerate_devices(backend, [str(device)])[0]
    devices = host.enumerate_devices(backend)
    if not devices:
        # zl ab cannot compile only: its hint is the IR-only screen, not "zl ab --compile-only".
        command = "zl screen" if what.startswith("zl ab") else what
        raise NoDeviceError(
            f"no {backend.name} device found on this machine; to compare generated code "
            f"without a device run an IR-only screen: {command} --compile-only [--target "
            f"{targets.expected([backend])}]")
    return devices[0]


def check_compile_only(measure: Measurement, provider: Provider, host: PluginHost,
                       backend: str | None = None) -> Measurement:
    """Refuse compile-only where the suite cannot, and settle its default target: the
    one the named ``backend`` declares, else the one the installed backends declare."""
    if measure.compile_only and not getattr(provider, "supports_compile_only", False):
        raise UsageError(f"--compile-only works with the builtin suite only (the {provider.name} "
                         "suite needs a device to build its inputs); drop --source/--suite")
    if measure.target and not measure.compile_only:
        raise UsageError("--target only applies with --compile-only")
    if measure.compile_only and not measure.target:
        wanted = backend or os.environ.get(BACKEND_ENV)
        named = [host.get_backend(wanted)] if wanted else host.backends()
        return attrs.evolve(measure, target=targets.default(named))
    return measure


def check_op_specs(specs: tuple[str, ...] | list[str], *, several_sources: bool = False) -> None:
    """Malformed specs fail before anything is probed or written."""
    for spec in specs:
        try:
            OpSpec.parse(spec)
            continue
        except BadInputError as exc:
            first = exc
        if not several_sources:
            raise first
        # It may start with a source's name (vllm:...), known once sources are resolved.
        try:
            OpSpec.parse(spec, prefixes=frozenset({spec.strip().split(":", 1)[0]}))
        except BadInputError:
            raise first from None


def resolve_ops(provider: Provider, sources: Sources | str | None,
                specs: tuple[str, ...] | list[str]) -> list[OpSpec]:
    """The named operators, or every operator of every source; each at most once."""
    sources = _as_sources(provider, sources)
    if specs:
        ops = [OpSpec.parse(s, prefixes=sources.prefixes, default_source=sources.default_name)
               for s in specs]
    else:
        ops = [op for name, path in (sources.entries or (("", None),))
               for op in every_op(provider, path, "" if sources.is_default(name) else name)]
        if not ops:
            raise UsageError(f"the {provider.name} suite offers no operators; name them with --ops")
    seen = set()
    for o in ops:
        if o.op in seen:
            raise UsageError(f"operator {o.op!r} named twice in --ops")
        seen.add(o.op)
    for name in dict.fromkeys(o.source for o in ops):
        # unknown operators and dtypes: exit 2, no cell
        check_ops_offered(provider, sources.path(name), [o for o in ops if o.source == name],
                          source_names=sources.names)
    return ops


def every_op(provider: Provider, source: str | None, name: str) -> list[OpSpec]:
    """Every operator of one source; a function two benchmark files define gets its file
    in its name (``nextafter_@nextafter_``), so each is one operator."""
    infos = provider.list_ops(source)
    count: dict[str, int] = {}
    for info in infos:
        count[info.op] = count.get(info.op, 0) + 1
    return [OpSpec.named(i.op, i.op_file, source=name, pinned=count[i.op] > 1) for i in infos]


def _as_sources(provider: Provider, sources: Sources | str | None) -> Sources:
    if isinstance(sources, Sources):
        return sources
    return Sources.single(sources, provider.default_source_name)


def cell_settings(measure: Measurement, sources: Sources | str | None) -> CellSettings:
    sources = sources if isinstance(sources, Sources) else Sources.single(sources)
    return CellSettings(python=measure.python, source=sources.default, sources=sources,
                        shape_file=measure.shape_file,
                        shapes=measure.shapes, level=measure.level, timer=measure.timer,
                        direct_repeat=measure.direct_repeat, replay_ms=measure.replay_ms, l2=measure.l2,
                        timing=measure.timing, gate_release=measure.gate_release,
                        isolate_tuner_cache=not measure.shared_tuner_cache,
                        timeout_s=measure.timeout_s, stall_timeout_s=measure.stall_timeout_s,
                        start=measure.start, lock_timeout_s=measure.lock_timeout_s,
                        compile_workers=measure.compile_workers,
                        sweep_devices=tuple(d for d in measure.sweep_devices.split(",") if d),
                        compile_only=measure.compile_only,
                        target=measure.target, op_timeouts=measure.op_timeouts,
                        replay_root=(Path(measure.replay_root).expanduser().resolve()
                                     if measure.replay_root is not None else None))
