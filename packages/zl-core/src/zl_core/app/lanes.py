"""Where a campaign's operators run (lanes, a scheduler) and how ``--resume`` continues one.

A campaign records its options in ``campaign.json`` (paths made absolute); a
resumed campaign runs with those, refusing options given anew that differ (only
``--devices`` and ``--scheduler`` may change: where the cells run, not what they
measure).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs

from zl_core.campaigns import executors, state
from zl_core.campaigns.dask_executor import import_distributed
from zl_core.campaigns.executor import Executor
from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import NoDeviceError, UsageError
from zl_core.interface import contract
from zl_core.plugins.host import PluginHost
from zl_core.store.layout import CampaignLayout
from zl_core.store.record import read_campaign

from .options import AbOptions, Lanes, Measurement, ScreenOptions, SwitchChoice, Where
from .resolve import Resolved, check_op_specs, resolve

#: A campaign command's option record: the two that run campaigns.
OptionsT = TypeVar("OptionsT", ScreenOptions, AbOptions)
R = TypeVar("R", bound=attrs.AttrsInstance)
_NESTED: dict[str, type[attrs.AttrsInstance]] = {"where": Where, "measure": Measurement, "switch": SwitchChoice, "lanes": Lanes}
_PATHS = ("runs_root", "screen", "shape_file", "resume", "dismiss", "frozen", "replay_root")
_PAIRS = ("a_env", "b_env", "op_timeouts", "control_env", "checks")


def options_json(options: Any) -> dict:
    """The options as JSON (paths as strings, tuples as lists), without the configuration
    file they came from: campaign.json keeps that apart (``config``), and a resume
    compares only the options themselves."""
    return attrs.asdict(options, filter=lambda field, _v: field.name != "config",
                        value_serializer=lambda _i, _f, v: str(v) if isinstance(v, Path) else v)


def options_from_json(cls: type[R], data: Mapping[str, object]) -> R:
    """An option record (or one it nests) as campaign.json keeps it."""
    kwargs: dict[str, object] = {}
    for field in attrs.fields(cls):
        if field.name not in data:
            continue
        value = data[field.name]
        if field.name in _NESTED and isinstance(value, Mapping):
            value = options_from_json(_NESTED[field.name], value)
        elif field.name in _PATHS and value is not None:
            value = Path(str(value))
        elif field.name in _PAIRS:
            value = tuple(tuple(pair) for pair in value) if isinstance(value, list | tuple) else value
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[field.name] = value
    return cls(**kwargs)


def flat_options(data: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(flat_options(value, f"{key}."))
        else:
            out[prefix + key] = value
    return out


def recorded_json(options: OptionsT, got: Resolved, root: Path) -> dict:
    """The options as campaign.json keeps them: every path absolute, nothing to re-guess."""
    items = got.sources.items()
    where = attrs.evolve(options.where, source=items[0] if items else got.source,
                         more_sources=items[1:], backend=got.backend.name,
                         suite=got.provider.name)
    # The mode the cells ran in, not the one asked for: an IR-only screen taken where no
    # device was found records compile_only and its target, so a resume cannot time it.
    measure = attrs.evolve(options.measure, compile_only=got.measure.compile_only,
                           target=got.measure.target)
    if measure.shape_file is not None:
        measure = attrs.evolve(measure, shape_file=Path(measure.shape_file).resolve())
    if measure.replay_root is not None:
        measure = attrs.evolve(measure, replay_root=Path(measure.replay_root).expanduser().resolve())
    out = options_json(attrs.evolve(options, where=where, measure=measure, runs_root=root,
                                    lanes=attrs.evolve(options.lanes, resume=None)))
    if out.get("dismiss") is not None:  # a screen's list of dismissed operators
        out["dismiss"] = str(Path(out["dismiss"]).resolve())
    return out


def resumed(options: OptionsT, kind: str) -> tuple[OptionsT, CampaignLayout]:
    """The campaign's own options (with this call's lanes) and its folder."""
    layout = CampaignLayout(Path(str(options.lanes.resume)).expanduser().resolve())
    meta = state.check_resumable(layout.root, kind)
    recorded_json = meta.options or {}
    measure = recorded_json.get("measure") or {}
    if not isinstance(measure, Mapping) or ("replay_ms" not in measure and not measure.get("compile_only")):
        # Its cells shared do_bench's rep across their ten graph replays; new cells spend
        # --replay-ms on each, and the report refuses to compare the two (caliber).
        raise UsageError(f"campaign {layout.root} was measured before the graph replay budget "
                         "existed; a resume would mix two timers. Start a new campaign")
    recorded = options_from_json(type(options), recorded_json)
    if meta.compile_only and not recorded.measure.compile_only:
        # Recorded before the mode was: campaign.json's own fields say how its cells ran.
        recorded = attrs.evolve(recorded, measure=attrs.evolve(
            recorded.measure, compile_only=True, target=meta.target))
    defaults = flat_options(options_json(type(options)()))
    given = {k: v for k, v in flat_options(options_json(options)).items()
             if v != defaults.get(k) and not k.startswith("lanes.")}
    state.refuse_conflicts(flat_options(options_json(recorded)), given)
    lanes = options.lanes
    recorded = attrs.evolve(recorded, lanes=Lanes(
        devices=lanes.devices if lanes.devices is not None else recorded.lanes.devices,
        scheduler=lanes.scheduler if lanes.scheduler is not None else recorded.lanes.scheduler,
        resume=layout.root,
        per_device=lanes.per_device if lanes.per_device != 1 else recorded.lanes.per_device,
        pipeline=resumed_pipeline(layout.root, lanes.pipeline, recorded.lanes.pipeline)))
    return recorded, layout


def resumed_pipeline(root: Path, given: int, recorded: int) -> int:
    """The depth a resumed campaign keeps: its cells' ``pipeline`` is a caliber field, and
    a report refuses a campaign whose cells ran at two depths."""
    if given != 1 and given != recorded:
        raise UsageError(f"campaign {root} ran its cells with --pipeline {recorded}; a resume "
                         f"keeps it (drop --pipeline {given}, or start a new campaign)")
    return recorded


@attrs.frozen(kw_only=True)
class Placement:
    """Where a campaign runs: what was resolved (its device that of the one serial lane,
    None with lanes), the executor, the lanes' devices (None: one serial lane) and what
    campaign.json keeps of the options for a resume."""

    got: Resolved
    executor: Executor
    devices: list[str] | None
    recorded: dict


def checked(options: OptionsT, kind: str) -> tuple[OptionsT, CampaignLayout | None]:
    """The options a --resume recorded (and the campaign it resumes), checked before
    anything is probed: operator specs, and lanes that go together."""
    resume = None
    if options.lanes.resume is not None:
        options, resume = resumed(options, kind)
    check_op_specs(options.ops, several_sources=bool(options.where.more_sources))
    check_lanes(options.where, options.lanes)
    return options, resume


def placed(host: PluginHost, options: Any, where: Where, kind: str, root: Path,
           op_specs: tuple[str, ...] | None = None, *,
           resume: CampaignLayout | None = None) -> Placement:
    """Suite, operators (``op_specs``, None: taken elsewhere), backend and device
    resolved, and the executor for the lanes asked for."""
    # Only a new screen falls back to the IR-only screen without a device: rounds need
    # one, and a resumed screen keeps the mode its finished cells were judged in.
    try:
        got = resolve(host, where, options.measure, what=f"zl {kind}",
                      local_device=needs_local_device(options.lanes),
                      ir_only_without_device=kind == "screen" and resume is None, op_specs=op_specs)
    except NoDeviceError as exc:
        if resume is None:
            raise
        meta = read_campaign(resume.root)
        raise NoDeviceError(f"campaign {resume.root} timed its cells on {meta.backend} device "
                            f"{meta.device}, and {str(exc).split(';')[0]}; resume it where "
                            "that device is, or compare generated code in a new IR-only screen "
                            f"(zl {kind} --compile-only ...)") from None
    chosen, device, devices = executor_for(host, got, options.lanes, kind=kind, root=root)
    got = attrs.evolve(got, device=device)
    # What campaign.json keeps for --resume: the options, the lanes; and the configuration
    # file some options came from (None: none).
    recorded = {"options": recorded_json(options, got, root),
                "devices": devices, "scheduler": options.lanes.scheduler,
                "config": options.config.to_json() if options.config else None}
    return Placement(got=got, executor=chosen, devices=devices, recorded=recorded)


def needs_local_device(lanes: Lanes) -> bool:
    return not (lanes.devices or lanes.scheduler)


def check_lanes(where: Where, lanes: Lanes) -> None:
    if lanes.devices and where.device:
        raise UsageError("--device and --devices exclude each other; --devices 0 is one lane")


def executor_for(host: PluginHost, got: Resolved, lanes: Lanes, *, kind: str,
                 root: Path) -> tuple[Executor, str | None, list[str] | None]:
    """(executor, the device of its one serial lane or None, the lanes' devices or None)."""
    if lanes.scheduler and lanes.devices:
        raise UsageError("--scheduler runs on the workers' devices; drop --devices "
                         "(give it to each 'zl worker')")
    if got.measure.compile_only and (lanes.devices or lanes.scheduler):
        raise UsageError("--compile-only cells use no device; drop --devices/--scheduler")
    if got.measure.gate_release != contract.GATE_AT_EXIT and lanes.pipeline < 2:
        raise UsageError(f"--gate-release {got.measure.gate_release} says when a pipelined cell "
                         "gives the device's timing gate back; give --pipeline 2 or more with it")
    if lanes.pipeline > 1:
        if kind != "ab":
            raise UsageError(f"--pipeline {lanes.pipeline} overlaps A/B cells' setup with timing; "
                             f"zl {kind} runs no rounds")
        if lanes.scheduler:
            raise UsageError("--pipeline keeps a lane's next cells starting on this host; it "
                             "takes no --scheduler (drop one of them)")
    if lanes.per_device > 1:
        if kind != "screen":
            raise UsageError(f"--per-device {lanes.per_device}: A/B rounds time one cell per device "
                             "at a time (cells sharing a device disturb each other's timing); "
                             "it is for screens")
        if got.measure.compile_only or lanes.scheduler:
            raise UsageError("--per-device shares this host's devices between cells; it takes "
                             "neither --compile-only nor --scheduler")
    if lanes.scheduler:
        import_distributed()
    devices = (resolve_devices(host, got.backend, lanes.devices, what=f"zl {kind}")
               if lanes.devices else None)
    if got.measure.sweep_devices and (lanes.scheduler or lanes.per_device > 1 or len(devices or ()) > 1):
        raise UsageError("--sweep-devices lends this host's devices to one cell's sweep at a "
                         "time; it takes one lane: drop --devices/--per-device/--scheduler, or "
                         "drop --sweep-devices and let the lanes use the devices")
    one_device = devices is None
    if devices is None and (lanes.per_device > 1 or lanes.pipeline > 1):
        devices = [got.device if got.device is not None else "0"]
    # Lanes hand each task their own device; one serial lane has the device resolved, and
    # so has one pipelined device (the campaign's telemetry samples it alone).
    device = got.device if one_device and lanes.pipeline > 1 else None if devices else got.device
    executor = executors.choose(got.backend, devices=devices, scheduler=lanes.scheduler,
                                expected_s=executors.expected_times(root, kind),
                                per_device=lanes.per_device, device=device, pipeline=lanes.pipeline)
    return executor, device, devices


def where_text(device: str | None, lanes: Lanes, devices: list[str] | None) -> str:
    if devices:
        return f" lanes {','.join(devices)}"
    if lanes.scheduler:
        return f" via scheduler {lanes.scheduler}"
    return "" if device is None else f":{device}"


def resolve_devices(host: PluginHost, backend: Backend, spec: str, *, what: str) -> list[str]:
    """``all`` or ``0,1,...`` as physical device ids; ids outside a visibility mask are refused."""
    if spec.strip().lower() == "all":
        devices = host.enumerate_devices(backend)
        if not devices:
            raise NoDeviceError(f"no {backend.name} device found on this machine for {what} "
                                "--devices all; name them with --devices 0,1,...")
        return devices
    devices = [d.strip() for d in spec.split(",") if d.strip()]
    if not devices:
        raise UsageError(f"--devices {spec!r} names no device; give all or a list such as 0,1")
    repeated = sorted({d for d in devices if devices.count(d) > 1})
    if repeated:
        raise UsageError(f"--devices names {', '.join(repeated)} twice; a device is one lane")
    mask = host.visibility_mask(backend)
    outside = [d for d in devices if mask is not None and d not in mask]
    if outside:
        raise UsageError(f"device(s) {', '.join(outside)} are hidden by the visibility mask "
                         f"({', '.join(mask or [])}); devices are physical ids, pick among those")
    return host.enumerate_devices(backend, devices)
