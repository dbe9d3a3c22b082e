"""What a benchmark provider (FlagGems, the built-in suite) offers the core.

A provider knows where benchmark files live and how to turn a :class:`CellRequest`
into a pytest command line. Everything generic about a cell (run directory,
caches, visibility, timeouts, identity) stays in :mod:`zl_core.cells.cell`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from zl_core.foundation import convert
from zl_core.foundation.backend import Backend
from zl_core.foundation.compiler_env import CompilerEnv
from zl_core.interface import contract
from zl_core.interface.opspec import OpSpec
from zl_core.interface.picks import Pick
from zl_core.interface.rows import CellRows, read_results

if TYPE_CHECKING:
    from zl_core.interface.switch_check import SwitchReport
    from zl_core.plugins.host import PluginHost

TIMERS = ("auto", "graph", "direct", "none")


@attrs.frozen(kw_only=True)
class OpInfo:
    """One operator a provider can run."""

    op: str
    op_file: str
    #: The dtypes its benchmark runs when no filter is given; () where the provider cannot say.
    dtypes: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # e.g. ("gemm", "tensor-core"); informational
    #: Why the benchmark never runs (an unconditional skip mark), "" when it does.
    skip: str = ""

    def to_json(self) -> dict:
        return {"op": self.op, "op_file": self.op_file, "dtypes": list(self.dtypes),
                "kinds": list(self.kinds), **({"skip": self.skip} if self.skip else {})}


@attrs.frozen(kw_only=True)
class CheckSpec:
    """Which accuracy tests check an operator: a test file of the provider's tree and the
    pytest arguments that select the tests of the variant the workload measures (``-m op``,
    ``-k EXPR``, or node ids)."""

    file: str  # relative to the source
    select: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)

    def pytest_args(self) -> tuple[str, ...]:
        """The file and the selection as pytest takes them; node ids name their file
        themselves, so a selection of node ids goes alone."""
        nodes = any("::" in arg for arg in self.select)
        return (*(() if nodes else (self.file,)), *self.select)

    def to_json(self) -> dict:
        return {"file": self.file, "select": list(self.select)}


@attrs.frozen(kw_only=True)
class CellRequest:
    """Everything one cell needs: one operator, one device, one side's environment."""

    op: OpSpec
    backend: Backend
    out_dir: Path
    python: str
    device: str | None = None
    source: str | None = None  # provider root (a FlagGems checkout); None = provider default
    test_node: str | None = None  # explicit pytest node id, overrides op_file
    shape_file: Path | None = None
    shapes: str = "file"  # "file" (shape_file or the provider's own YAML) | "upstream"
    level: str = "core"
    autotune_mode: str = "uncontrolled"
    replay_from: Path | None = None  # a cell directory whose autotune_records/ to replay
    timer: str = "auto"
    timing: str = "full"  # contract.TIMINGS: also the reference, or the operator alone
    #: The campaign's timing plan (contract.TIMING_PLANS), what the identity records as
    #: the caliber's ``timing``; None: ``timing`` itself.
    timing_plan: str | None = None
    #: A Triton cache the cell shares with its side's other cells of the operator (A/B
    #: rounds: round 1 compiles, later rounds load); None: its own, in its folder, removed
    #: when it ends.
    compile_cache: Path | None = None
    direct_repeat: int = 1
    replay_ms: float = contract.DEFAULT_REPLAY_MS  # device time of one graph replay
    l2: str = contract.DEFAULT_L2  # contract.L2_MODES: the L2 cache graph-timed calls find
    isolate_tuner_cache: bool = True
    env: Mapping[str, str] = attrs.field(factory=dict)  # this side's overrides
    #: Every variable the campaign's sides (and a control side) set: none of them, nor a
    #: member of their switch families, is inherited from zl's environment
    #: (:mod:`zl_core.foundation.compiler_env`); the keys of ``env`` always count.
    switch_vars: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)
    timeout_s: float = contract.DEFAULT_TIMEOUT_S
    # Seconds without output or progress beat before the cell is ended as STALLED (0: never).
    stall_timeout_s: float = contract.DEFAULT_STALL_TIMEOUT_S
    # Seconds to wait for a device another process holds (0: for ever).
    lock_timeout_s: float = contract.DEFAULT_LOCK_TIMEOUT_S
    compile_only: bool = False
    target: str | None = None  # compile-only target, e.g. "cuda:90"
    side: str = ""  # "A" / "B" in campaigns; informational
    # Lanes of the campaign measuring at the same time (a caliber field: devices of one
    # host couple through its power and cooling).
    concurrency: int = 1
    #: Cells of this cell's device in flight (``zl ab --pipeline``): above 1, the cell takes
    #: the device's timing gate (:mod:`zl_core.interface.timing_gate`) before it times.
    pipeline: int = 1
    #: contract.GATE_RELEASES: when a pipelined cell gives the gate back.
    gate_release: str = "exit"
    #: A pipelined cell started early: the file whose turn it waits for before the gate
    #: (contract.GATE_TURN; zl_core.campaigns.prefetch). None: it takes the gate when ready.
    gate_turn: str | None = None
    #: contract.STARTS: a new interpreter ("cold") or a fork of one that already imported
    #: the provider's warm modules ("warm", :mod:`zl_core.cells.warmstart`).
    start: str = "cold"
    #: Threads compiling an autotune sweep's candidates before they are timed (1: none;
    #: 0: :func:`zl_core.cells.cell_setup.compile_workers`, the host's cores up to a cap).
    compile_workers: int = 0
    #: Devices to shard a recording cell's autotune sweep over (zl_core.cells.sweep_shards);
    #: fewer than two: the cell sweeps itself, serially.
    sweep_devices: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)
    #: ``index/count`` when this cell is one shard of such a sweep ("" otherwise).
    sweep_shard: str = ""
    #: Set: the cell runs these accuracy tests instead of the benchmark, and writes their
    #: JUnit XML report to ``out_dir/contract.ACCURACY_REPORT``.
    check: CheckSpec | None = None


@attrs.frozen(kw_only=True)
class ShardMerge:
    """What a provider made of a sharded sweep's finished shard cells."""

    #: Why the shards cannot stand in for the serial sweep ("" when they can).
    problem: str = ""
    entries: int = 0  # picks in the merged record
    #: Keys two shards tuned differently, one line each (the lowest shard's pick kept).
    conflicts: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)


@attrs.frozen
class WarmPlan:
    """What a provider's warm cells share (:mod:`zl_core.cells.warmstart`).

    ``modules`` are imported once, in order, before cells fork; a module that is missing
    or fails is left out, and one that starts the device driver ends the list (a driver
    does not survive a fork). ``per_cell`` names the variables of the provider's cell
    environment that differ from cell to cell (a per-cell tuner cache, say); the core's
    own per-cell variables and the side's overrides need not be named.
    """

    modules: tuple[str, ...] = attrs.field(converter=convert.str_tuple)
    per_cell: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)


@attrs.frozen(kw_only=True)
class CellCommand:
    """How to start a cell's process."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = attrs.field(factory=dict)  # added to the cell's environment
    #: Variables removed from the cell's environment (e.g. one that would bypass an
    #: isolated cache), after the side's overrides are applied.
    unset: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)
    # Identity fields the provider knows (e.g. provider_commit, shape_mode, tuner_cache);
    # they replace the core's generic defaults before the identity is first written.
    identity: Mapping[str, object] = attrs.field(factory=dict)


#: The provider API this zl speaks. 2: ``preflight`` and ``cell_command`` take the run's
#: plugin host as a second argument; a provider written to 1 (``preflight(self, request)``)
#: keeps working, called without it (:func:`zl_core.plugins.host.adapt_provider`).
API_VERSION = 2


class Provider(abc.ABC):
    """A source of benchmark cells, registered through ``zl_providers``."""

    #: Name used by ``--suite`` (``flaggems``, ``builtin``).
    name: str = ""
    description: str = ""
    #: Whether cells can compile for a target without a device (``--compile-only``).
    supports_compile_only: bool = False
    #: Environment variable naming this provider's checkout, for a provider whose
    #: cells run from one ("" = none needed). A checkout, given or named there,
    #: selects this provider when no suite is named.
    source_env: str = ""

    @abc.abstractmethod
    def list_ops(self, source: str | None) -> list[OpInfo]:
        """The operators this provider offers under ``source``."""

    @abc.abstractmethod
    def preflight(self, request: CellRequest, host: PluginHost | None = None) -> None:
        """Check the request before any process starts; raise PreflightError(check, detail).

        ``host`` is the run's plugin host (the core passes it; None when a caller has
        none), for what the backends' plugins add to a cell.
        """

    def dtype_choices(self, source: str | None) -> tuple[str, ...]:
        """The dtypes a filter may name under ``source``, whatever the operator (the
        vocabulary of the suite's own benchmark command line); () where the suite does not
        restrict them. An operator's ``OpInfo.dtypes`` narrow them further: ``zl screen``,
        ``zl ab``, ``zl run`` and ``zl freeze`` refuse, before any cell, a dtype outside
        either."""
        return ()

    def rejected_dtypes(self, cell_dir: Path) -> bool:
        """Whether the finished cell's benchmark refused the requested dtype filter.

        A campaign then reruns the cell without the filter and says so. Default: never.
        """
        return False

    @abc.abstractmethod
    def cell_command(self, request: CellRequest, host: PluginHost | None = None) -> CellCommand:
        """The command that runs the cell (called after a successful preflight, with
        the same ``host``)."""

    def warm_plan(self, request: CellRequest) -> WarmPlan | None:
        """What this provider's cells may import before they fork (``--start warm``), and
        which variables of its cell environment differ per cell; None (the default):
        its cells always start cold."""
        return None

    #: Whether this provider's cells can sweep a slice of their shapes
    #: (``contract.SWEEP_SHARD``) and their picks be merged (:meth:`merge_sweep_shards`).
    supports_sweep_shards: bool = False

    def merge_sweep_shards(self, shard_cells: Sequence[Path], into: Path) -> ShardMerge:
        """Check that the finished shard cells covered the whole shape set between them
        and write their picks, merged, under ``into`` as a recording cell writes its own
        (what ``replay_from`` reads). The default: the sweep cannot be sharded."""
        return ShardMerge(problem=f"suite {self.name} cannot merge sweep shards")

    #: What the first (default) source of a campaign is called (``main:op`` addresses it).
    default_source_name: str = "main"

    def source_name(self, source: str) -> str | None:
        """The name for a further, unnamed source at ``source`` (its operators are then
        ``NAME:op``), or None when the user must name it (``--source NAME=PATH``)."""
        return None

    def check_source(self, source: str | None) -> None:  # noqa: B027 - optional, a no-op by default
        """Check the provider's checkout once, before any cell runs (a campaign's
        cells would each fail their preflight); raise PreflightError (exit 3) naming
        what is wrong. The default checks nothing."""

    def compiler_env(self) -> CompilerEnv:
        """The variables this provider's compiler and library read, and the families of its
        compiler's switches (:mod:`zl_core.foundation.compiler_env`); the cell's backend adds its
        vendor's. A cell records them as it got them, compares the inherited ones (the
        caliber field ``compiler_env``) and inherits no member of the switch's families.
        The default: none (a cell then records what its backend declares)."""
        return CompilerEnv()

    def switch_report(self, *, python: str, names: Sequence[str], a_values: Mapping[str, str],
                      b_values: Mapping[str, str], target: str | None = None) -> SwitchReport | None:
        """Which of ``names`` (set to ``a_values`` on side A, ``b_values`` on side B)
        the compiler of this provider's cells reads, asked in ``python``, the
        interpreter the cells run (:mod:`zl_core.interface.switch_check`).

        ``target`` is the compile-only target, if any. The default answers None:
        a provider whose cells run no Triton is not held by the check.
        """
        return None

    # -- accuracy tests: a side's correctness (docs/sealed-campaigns.md) --

    #: Whether :meth:`cell_command` runs a request's ``check`` (its accuracy tests).
    supports_checks: bool = False

    def default_check(self, op: OpInfo, source: str | None) -> CheckSpec | None:
        """The accuracy tests of ``op`` under ``source`` when a manifest names none; None
        when this provider finds none (the manifest must then name them or say why not)."""
        return None

    def collect_check(self, check: CheckSpec, *, source: str | None, python: str) -> list[str] | None:
        """The tests ``check`` selects under ``source``, as ``python`` (the cells'
        interpreter) collects them, without running any: ``zl freeze`` refuses a selection
        that selects none, which would make every workload unclassable after the device
        time is spent. None: this provider cannot tell before a cell runs. Raises ZlError
        when the tests cannot be collected (an import error, a bad selection). Called from
        worker threads (collections run side by side): start the collecting process with
        :func:`zl_core.foundation.interrupts.run`, so that an interrupt ends it."""
        return None

    # -- sealed campaigns (zl freeze): what binds a campaign to this provider's tree --

    def workload_files(self, op: OpInfo, source: str | None) -> list[Path]:
        """The files that define how ``op`` is measured under ``source`` (its benchmark
        file and the shared harness it runs on); a sealed campaign binds their SHA-256.
        The default: none beyond zl's own files, which every seal binds."""
        return []

    def source_commit(self, source: str | None) -> str | None:
        """The commit of the checkout ``source`` (None: no versioned checkout)."""
        return None

    def source_changes(self, source: str | None) -> list[str]:
        """Tracked files of the checkout ``source`` changed and not committed, which its
        commit cannot vouch for ([]: none, or no versioned checkout). Raises ZlError when
        the checkout is versioned but cannot say (a seal never reads that as clean)."""
        return []

    def frozen_imports(self, *, python: str, source: str | None) -> dict[str, str | None]:
        """Where the cells' interpreter ``python`` imports the modules a sealed campaign
        binds (``{module: path or None}``); the default: Triton."""
        from zl_core.foundation.module_origins import origins

        return origins(python, ["triton"])

    def read_rows(self, cell_dir: Path) -> CellRows:
        """The measurement rows of one of this provider's cells.

        The default reads zl's structured ``results.json``; a provider whose
        benchmarks print their results overrides it to read those as well.
        """
        return read_results(cell_dir)

    def autotune_picks(self, cell_dir: Path) -> list[Pick] | None:
        """The autotune picks a recording cell of this provider kept, with its sweeps'
        timings where they were recorded (a re-tuned campaign compares them); None when
        the provider keeps none it can read back."""
        return None
