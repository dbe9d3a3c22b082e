"""The A/B estimate's parts (zl_core.campaigns.ab_estimate): a cell as setup and hold, each
planned cell from the cells most like it, the lanes and the gate simulated, and the
simulation against two A/B campaigns measured on an H100 (their packed cells)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from zl_core.campaigns.ab_estimate import (
    CellCost,
    ab_estimate,
    campaign_like,
    cell_cost,
    early_cells,
    op_cells,
    planned_slots,
    simulate,
)
from zl_core.campaigns.ab_task import AbTask, RoundsPlan, planned_cells
from zl_core.campaigns.estimate import history
from zl_core.interface.occupancy import measure

DATA = Path(__file__).resolve().parent.parent / "docs/validation/data/2026-12-08-ab-once"


def cells(*pairs: tuple[float, float]) -> list[CellCost]:
    return [CellCost(setup_s=s, hold_s=h) for s, h in pairs]


def test_a_serial_cell_sets_up_in_its_start_imports_and_collection():
    record = {"wall_s": 20.0, "seconds": {"preflight": 0.5, "start_imports": 6.0, "collection": 0.5,
                                          "operator_timing": 9.0, "other": 4.0}}
    assert cell_cost(record) == CellCost(setup_s=7.0, hold_s=13.0, timing_s=9.0)  # from its phases
    assert cell_cost({"wall_s": 12.0, "seconds": None}) == CellCost(setup_s=0.0, hold_s=12.0)


def test_a_pipelined_cell_holds_the_gate_to_its_exit_and_its_wait_is_no_cost():
    record = {"wall_s": 30.0, "seconds": {"start_imports": 6.0},
              "timing_gate": {"held": [[100.0, 107.5]], "waited_s": 12.0, "until_exit": True,
                              "exit_seen": 107.8}}
    cost = cell_cost(record)
    assert cost.hold_s == pytest.approx(7.8)  # to the exit, not to the last record
    assert cost.setup_s == pytest.approx(30.0 - 7.8 - 12.0)
    assert cost.timing_s == 0.0  # it recorded no timing
    timed = cell_cost({**record, "device_busy": {"seconds": 4.5}})
    assert timed.timing_s == 4.5 and timed.hold_s == cost.hold_s


def test_a_cell_that_gave_the_gate_back_tears_down_beside_the_next_hold():
    # --gate-release tests: held 100-106 of a life 90-110, 2 s of it waiting at the gate
    record = {"wall_s": 20.0, "seconds": {"start_imports": 6.0},
              "device_busy": {"seconds": 3.0, "window": [90.0, 110.0]},
              "timing_gate": {"held": [[100.0, 106.0]], "waited_s": 2.0, "until_exit": False,
                              "exit_seen": None}}
    assert cell_cost(record) == CellCost(setup_s=8.0, hold_s=6.0, timing_s=3.0, tail_s=4.0)
    released = [[CellCost(setup_s=2.0, hold_s=5.0, tail_s=3.0)] for _ in range(2)]
    # both ask at 2 s; the first holds 2-7 and ends at 10, the second holds 7-12, ends at 15
    assert simulate(released, devices=1, depth=2) == 15.0
    assert simulate(released, devices=1, depth=1) == 20.0  # one after the other, tails and all


def test_each_planned_cell_is_costed_from_the_cells_most_like_it():
    def rec(round_no: int, side: str, wall: float) -> dict:
        return {"wall_s": wall, "seconds": None, "round": round_no, "side": side}

    records = [rec(1, "A", 40.0), rec(1, "B", 20.0), *(rec(r, s, w) for r in (2, 3, 4)
                                                      for s, w in (("A", 10.0), ("B", 12.0)))]
    slots = planned_slots(8, retuned=False, control=True, checks=True)
    walls = [c.wall_s for c in op_cells(records, slots)]
    # round 1 A, B; the control side (round 1, never seen: round 1's median); rounds 2-8;
    # the accuracy tests as later rounds of their sides
    assert walls == [40.0, 20.0, 30.0] + [10.0, 12.0] * 7 + [10.0, 12.0]
    assert op_cells([], slots) is None


@pytest.mark.parametrize("retuned,control,checks", [(False, False, False), (True, False, False),
                                                    (False, True, True), (True, True, True)])
def test_the_planned_cells_are_the_ones_a_task_counts(retuned, control, checks):
    task = AbTask(op=None, control=False, exempt_no_ir_diff=False, layout=None, suite="s", backend=None,
                  sides=None, settings=None, retuned=retuned,
                  plan=RoundsPlan(rounds=6, max_rounds=6, allow_no_ir_diff=False, threshold_pct=1.0),
                  check=object() if checks else None, control_env=(("X", "1"),) if control else ())
    assert len(planned_slots(6, retuned=retuned, control=control, checks=checks)) == planned_cells(task)


def test_an_operators_cells_run_one_after_another_whatever_the_pipeline():
    one = cells(*[(10.0, 5.0)] * 4)
    assert simulate([one], devices=1, depth=1) == 60.0
    assert simulate([one], devices=1, depth=3) == 60.0


def test_a_pipeline_overlaps_setup_with_other_operators_holds_one_hold_at_a_time():
    three = [cells((10.0, 5.0)) for _ in range(3)]
    assert simulate(three, devices=1, depth=1) == 45.0
    assert simulate(three, devices=1, depth=3) == 25.0  # all ask at 10 s; holds end at 15, 20, 25
    assert simulate(three, devices=3, depth=1) == 15.0
    # two cells each on two devices of two lanes: each device's gate serves its own lanes
    assert simulate([cells((10.0, 5.0)) for _ in range(4)], devices=2, depth=2) == 20.0


def test_later_cells_started_early_set_up_beside_the_hold_before_them():
    one = cells(*[(10.0, 5.0)] * 4)
    # cell 0 holds 10-15; each next one starts as the one before takes the gate and asks
    # once it ended: 20-25, 30-35, 40-45 (60 s one after another)
    assert simulate([one], devices=1, depth=2, early=(1, 3)) == 45.0
    short = cells(*[(2.0, 5.0)] * 4)
    assert simulate([short], devices=1, depth=2, early=(1, 3)) == 2.0 + 4 * 5.0  # the gate never idle
    assert simulate([short], devices=1, depth=2, early=(2, 3)) == 2.0 + 5.0 + 2.0 + 3 * 5.0
    assert simulate([one], devices=1, depth=1, early=(1, 3)) == 60.0  # no pipeline, no gate: as before
    slots = planned_slots(4, retuned=False, control=True, checks=True)
    # round 1's A, B and control side go first; rounds 2-4 may start early; the checks after
    assert early_cells(slots) == (3, 8) and slots[3][0] == 2 and slots[9][0] == 0


def test_the_longest_operators_go_first():
    tasks = [cells((0.0, 1.0)), cells((0.0, 1.0)), cells((0.0, 4.0))]
    # longest first over two serial lanes: 4 | 1 + 1 (plan order would give 1 + 4 | 1)
    assert simulate(tasks, devices=2, depth=1) == 4.0


def test_unseen_operators_cost_the_typical_seen_one():
    def rec(round_no: int, side: str, wall: float) -> dict:
        return {"wall_s": wall, "seconds": None, "round": round_no, "side": side}

    seen = {op: {"A": [rec(1, "A", w), rec(2, "A", w / 2)], "B": [rec(1, "B", w), rec(2, "B", w / 2)]}
            for op, w in (("a", 10.0), ("b", 20.0), ("c", 30.0))}
    slots = planned_slots(4, retuned=False, control=False, checks=False)
    est = ab_estimate(["a", "b", "c", "new"], seen, slots, devices=1, depth=1, campaigns_read=1)
    assert [o.seconds for o in est.ops] == [50.0, 100.0, 150.0, None]
    assert est.assumed_s == 100.0 and est.unseen == 1
    assert est.total_s == est.makespan_s == 400.0
    none = ab_estimate(["new"], {}, slots, devices=1, depth=3, campaigns_read=0)
    assert none.total_s is None and none.makespan_s is None


def test_a_campaign_like_the_measured_one_takes_its_operators_in_turn():
    def rec(round_no: int, wall: float) -> dict:
        return {"wall_s": wall, "seconds": None, "round": round_no, "side": "A"}

    seen = {"a": {"A": [rec(1, 4.0), rec(2, 1.0)]}, "b": {"A": [rec(1, 8.0), rec(2, 2.0)]}, "none": {}}
    slots = planned_slots(4, retuned=False, control=False, checks=False)
    like = campaign_like(seen, 5, slots)
    assert [sum(c.wall_s for c in cells) for cells in like] == [4 + 4 + 6 * 1, 8 + 8 + 6 * 2] * 2 + [14]
    assert campaign_like({}, 5, slots) == []


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ab-once")
    with tarfile.open(DATA / "campaigns.tgz") as pack:
        pack.extractall(out, filter="data")
    return out


@pytest.mark.parametrize("path,depth", [("once", 3), ("serial", 1)])
def test_the_simulation_gives_the_measured_campaigns_wall_from_their_own_cells(measured, path, depth):
    """The packed campaigns of docs/validation/2026-12-08-ab-once.md (an H100, 4 operators,
    4 rounds): planned from their own cells, the simulated wall is within 2% of the time
    at least one of their cells ran."""
    root = measured / path
    [campaign] = root.glob("ab_*")
    busy = [json.loads(p.read_text())["phases"]["device_busy"] for p in campaign.glob("*/r*/*/run_identity.json")]
    running = measure([tuple(b["window"]) for b in busy])
    seen, read = history(root, "ab", compile_only=False, host="vm")
    assert read == 1 and sorted(seen) == ["bmm", "mm", "relu", "softmax"]
    est = ab_estimate(sorted(seen), seen, planned_slots(4, retuned=False, control=False, checks=False),
                      devices=1, depth=depth, campaigns_read=read)
    assert est.makespan_s == pytest.approx(running, rel=0.02)
    assert est.timing_s == pytest.approx(sum(b["seconds"] for b in busy), rel=0.02)  # 145.6 s, 222.1 s
    if depth > 1:  # the pipeline's wall is well under its cells one after the other
        assert est.makespan_s < 0.7 * est.total_s
