"""What a campaign command is asked for, as plain frozen records.

The command line fills these from its arguments; tests and scripts build them
directly. Defaults are the command line's defaults.
"""

from __future__ import annotations

import sys
from pathlib import Path

import attrs

from zl_core.foundation import convert
from zl_core.interface import contract


@attrs.frozen(kw_only=True)
class Where:
    """Which suite runs the cells, from which checkout, on which backend and device."""

    suite: str | None = None  # None: the suite that runs from a checkout when one is given, else builtin
    source: str | None = None  # the provider's checkout (--source), maybe NAME=PATH
    #: Further checkouts (``--source`` again), ``PATH`` or ``NAME=PATH``.
    more_sources: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)
    backend: str | None = None  # None: $ZL_BACKEND, or the only / the probing backend
    device: str | None = None  # None: the first the backend finds


@attrs.frozen(kw_only=True)
class Measurement:
    """How every cell measures (the caliber the user chooses)."""

    python: str = sys.executable
    shape_file: Path | None = None
    shapes: str = "file"
    level: str = "core"
    timer: str = "auto"
    direct_repeat: int = 1
    replay_ms: float = contract.DEFAULT_REPLAY_MS  # device time of one graph replay
    #: contract.L2_MODES: the L2 cache graph-timed calls find; a campaign recorded before
    #: the setting was warm.
    l2: str = contract.L2_UNSET
    timing: str = "full"  # contract.TIMING_PLANS (a screen: contract.TIMINGS)
    #: contract.GATE_RELEASES: when a pipelined A/B cell gives its device's gate back.
    gate_release: str = "exit"
    shared_tuner_cache: bool = False
    timeout_s: float = contract.DEFAULT_TIMEOUT_S
    stall_timeout_s: float = contract.DEFAULT_STALL_TIMEOUT_S  # 0: no stall window
    start: str = "cold"  # contract.STARTS; a campaign recorded before --start was cold
    lock_timeout_s: float = contract.DEFAULT_LOCK_TIMEOUT_S  # 0: wait for a busy device for ever
    compile_workers: int = 0  # threads compiling a sweep's candidates before they are timed (0: auto)
    #: Devices to shard recording cells' sweeps over: "" none, "all", or "0,1,..."
    #: (zl_core.cells.sweep_shards); resolve() turns it into ids.
    sweep_devices: str = ""
    compile_only: bool = False
    target: str | None = None  # compile-only target
    #: ``(op, seconds)``: operators with their own cell timeout (a sealed campaign's workloads).
    op_timeouts: tuple[tuple[str, float], ...] = attrs.field(default=(), converter=convert.number_pairs)
    #: An earlier screen whose side-A records every cell replays (``--replay-root``);
    #: None: the campaign records its own (app.replay_root checks it).
    replay_root: Path | None = None


@attrs.frozen(kw_only=True)
class SwitchChoice:
    """The switch as the user named it; :func:`zl_core.foundation.switches.resolve_sides` completes it."""

    switch: str | None = None
    a_value: str | None = None
    b_value: str | None = None
    a_env: tuple[tuple[str, str], ...] = ()
    b_env: tuple[tuple[str, str], ...] = ()
    force: bool = False  # run even when the cells' compiler does not read the switch

    @property
    def given(self) -> bool:
        return bool(self.switch or self.a_env or self.b_env or self.a_value or self.b_value)


@attrs.frozen(kw_only=True)
class Lanes:
    """Where a campaign's operators run, and whether it continues an earlier one."""

    devices: str | None = None  # "all" | "0,1,...": one lane per device of this host
    scheduler: str | None = None  # tcp://HOST:8786: the lanes of zl workers (Dask)
    resume: Path | None = None  # a campaign folder to continue with its own options
    per_device: int = 1  # lanes per device: cells a screen runs on one device at once
    #: A/B cells of one device in flight, their timing one at a time (zl_core.interface.timing_gate).
    pipeline: int = 1
    #: Canary operators first (zl_core.campaigns.canary): auto (long or frozen), on, off.
    canary: str = "auto"
    #: What another process on a device does to the campaign (app.device_users): refuse, record.
    other_processes: str = "refuse"


@attrs.frozen(kw_only=True)
class ConfigUse:
    """The configuration file a command took option values from (``campaign.json``'s
    ``config``); the values themselves are already in the option record."""

    path: Path
    sha256: str  # of the file's bytes when it was read
    values: dict = attrs.field(factory=dict)  # key -> the value as the file wrote it, taken
    overridden: tuple[str, ...] = ()  # keys of the file that the command line gave anew

    def to_json(self) -> dict:
        return {"path": str(self.path), "sha256": self.sha256, "values": dict(self.values),
                "overridden": list(self.overridden)}


@attrs.frozen(kw_only=True)
class ScreenOptions:
    ops: tuple[str, ...] = ()  # op[:op_file[:dtypes]] specs; () = every op of the suite
    dismiss: Path | None = None  # "op  reason" lines: listed as SKIPPED, never run
    where: Where = Where()
    measure: Measurement = Measurement(replay_ms=contract.SCREEN_REPLAY_MS, timing=contract.SCREEN_TIMING,
                                       start=contract.CAMPAIGN_START, l2=contract.DEFAULT_L2)
    switch: SwitchChoice = SwitchChoice()
    runs_root: Path | None = None
    lanes: Lanes = Lanes()
    frozen: Path | None = None  # a folder written by zl freeze: checked before any cell runs
    config: ConfigUse | None = None  # the configuration file some of these came from


@attrs.frozen(kw_only=True)
class AbOptions:
    ops: tuple[str, ...] = ()  # () = the IR_CHANGED operators of the screen
    where: Where = Where()
    measure: Measurement = Measurement(start=contract.CAMPAIGN_START, l2=contract.DEFAULT_L2)
    switch: SwitchChoice = SwitchChoice()
    runs_root: Path | None = None
    lanes: Lanes = Lanes()
    rounds: int | None = 8  # None = adaptive
    max_rounds: int = 12
    screen: Path | None = None  # None = the latest screen under the runs root
    allow_no_ir_diff: bool = False
    aa: bool = False
    controls: int = 0
    threshold_pct: float = 1.0
    telemetry_interval: float = 1.0
    frozen: Path | None = None  # a folder written by zl freeze: checked before any cell runs
    #: ``(op, test file, pytest selection)``: each side's accuracy tests of an operator, run
    #: after its rounds (a sealed campaign's workloads).
    checks: tuple[tuple[str, str, tuple[str, ...]], ...] = attrs.field(
        default=(), converter=lambda v: tuple((str(o), str(f), tuple(s)) for o, f, s in v))
    #: The control side's variables, added to side B's (a sealed campaign's ``control``).
    control_env: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=convert.str_pairs)
    #: Side R beside A and B: B's environment, its own autotune picks (the effect users
    #: ship), and side A's picks recorded twice (how often they reproduce).
    retuned: bool = False
    config: ConfigUse | None = None  # the configuration file some of these came from
