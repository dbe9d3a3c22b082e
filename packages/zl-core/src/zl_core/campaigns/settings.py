"""The measurement settings every cell of a campaign shares (its caliber)."""

from __future__ import annotations

from pathlib import Path

import attrs

from zl_core.foundation import convert
from zl_core.foundation.backend import Backend
from zl_core.foundation.switches import Sides
from zl_core.interface import contract
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest
from zl_core.interface.sources import Sources
from zl_core.store.layout import CampaignLayout


@attrs.frozen(kw_only=True)
class CellSettings:
    """What every cell of a campaign is measured with; builds each cell's frozen request."""

    python: str
    source: str | None  # the default source's checkout
    shape_file: Path | None
    shapes: str
    level: str
    timer: str
    direct_repeat: int
    isolate_tuner_cache: bool
    timeout_s: float
    compile_only: bool
    target: str | None
    replay_ms: float = contract.DEFAULT_REPLAY_MS
    l2: str = contract.DEFAULT_L2
    timing: str = "full"  # contract.TIMING_PLANS: each cell's own by its round (cell_timing)
    stall_timeout_s: float = contract.DEFAULT_STALL_TIMEOUT_S
    start: str = "cold"  # contract.STARTS; zl_core.campaigns.start_check settles it
    lock_timeout_s: float = contract.DEFAULT_LOCK_TIMEOUT_S
    compile_workers: int = 0  # 0: the cell's host's cores, up to contract.COMPILE_WORKERS_CAP
    #: Devices a recording cell's sweep is sharded over (zl_core.cells.sweep_shards); () none.
    sweep_devices: tuple[str, ...] = attrs.field(default=(), converter=convert.str_tuple)
    #: Lanes measuring at the same time (set from the executor; a caliber field).
    concurrency: int = 1
    #: Cells of one device in flight while one times (set from the executor; a caliber field).
    pipeline: int = 1
    #: contract.GATE_RELEASES: when a pipelined cell gives its device's gate back.
    gate_release: str = "exit"
    #: Every checkout, the default first; an operator's ``source`` picks its cells' one.
    sources: Sources = attrs.field(factory=Sources)
    #: ``(op, seconds)``: operators whose cells have their own timeout (a sealed
    #: campaign's per-workload ``timeout_s``); the rest have ``timeout_s``.
    op_timeouts: tuple[tuple[str, float], ...] = attrs.field(default=(), converter=convert.number_pairs)
    #: An earlier screen whose ``<op>/A`` record every cell replays (``--replay-root``): no
    #: cell of the campaign records. None: the campaign's own record cell records.
    replay_root: Path | None = None

    def timeout_of(self, op: OpSpec) -> float:
        return dict(self.op_timeouts).get(op.op, self.timeout_s)

    def to_json(self) -> dict:
        """The fields campaign.json records (the rest are in every cell's identity)."""
        return {"source": self.source, "sources": self.sources.to_json(), "compile_only": self.compile_only, "target": self.target,
                "level": self.level, "timer": self.timer, "start": self.start}

    def _source_of(self, op: OpSpec) -> str | None:
        return self.sources.path(op.source) if op.source else self.source

    def request(self, *, op: OpSpec, backend: Backend, device: str | None, out_dir: Path,
                env: dict[str, str], side: str, autotune_mode: str,
                replay_from: Path | None, test_node: str | None = None,
                switch_vars: tuple[str, ...] = (), round_no: int = 1) -> CellRequest:
        if self.compile_only:
            # Compile-only cells compile every config; nothing is tuned to pin.
            autotune_mode, replay_from = "none", None
        return CellRequest(op=op, backend=backend, out_dir=out_dir, python=self.python, test_node=test_node,
                           device=device, source=self._source_of(op), shape_file=self.shape_file,
                           shapes=self.shapes, level=self.level, autotune_mode=autotune_mode,
                           replay_from=replay_from, timer=self.timer,
                           timing=contract.cell_timing(self.timing, round_no),
                           timing_plan=self.timing if self.timing not in contract.TIMINGS else None,
                           direct_repeat=self.direct_repeat, replay_ms=self.replay_ms, l2=self.l2,
                           isolate_tuner_cache=self.isolate_tuner_cache, env=env,
                           switch_vars=switch_vars,
                           timeout_s=self.timeout_of(op), stall_timeout_s=self.stall_timeout_s,
                           compile_only=self.compile_only,
                           target=self.target, side=side, concurrency=self.concurrency,
                           pipeline=self.pipeline, gate_release=self.gate_release,
                           start=self.start, lock_timeout_s=self.lock_timeout_s,
                           compile_workers=self.compile_workers,
                           sweep_devices=self.sweep_devices if autotune_mode == "record" else ())

    def pinned_request(self, *, op: OpSpec, backend: Backend, sides: Sides, side: str,
                       device: str | None, out_dir: Path, record_cell: Path,
                       also_set: tuple[str, ...] = (), round_no: int = 1) -> CellRequest:
        """Side ``side``'s cell in ``out_dir`` with the autotune configs pinned to
        ``record_cell``: that cell records them, every other cell replays its record.
        With a :attr:`replay_root`, every cell replays that screen's ``<op>/A`` instead.
        Screen and A/B tasks build every cell through this, on the lane's device.
        ``also_set``: variables a further side sets (a control's), which no cell inherits;
        ``round_no``: the cell's round (what it times under a timing plan of "once")."""
        if self.replay_root is not None:
            record_cell = CampaignLayout(self.replay_root).cell_dir(op.op, "A")
        recording = Path(out_dir) == Path(record_cell)
        return self.request(op=op, backend=backend, device=device, out_dir=out_dir, env=sides.env(side),
                            side=side, autotune_mode="record" if recording else "replay",
                            replay_from=None if recording else record_cell,
                            switch_vars=switch_vars(sides, also_set), round_no=round_no)


def switch_vars(sides: Sides, also_set: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every variable one of a campaign's sides sets: what its cells never inherit."""
    return tuple(sorted({*sides.a_env, *sides.b_env, *also_set}))
