"""The executor seam: campaigns plan frozen operator tasks and an executor runs them."""

from __future__ import annotations

import pickle
import sys

import attrs
from zl_core.campaigns.ab_campaign import run_ab
from zl_core.campaigns.ab_task import AbTask, RoundsPlan
from zl_core.campaigns.executor import Lane, SerialExecutor
from zl_core.campaigns.screen_campaign import run_screen
from zl_core.campaigns.screen_task import ScreenTask
from zl_core.campaigns.settings import CellSettings
from zl_core.campaigns.spec import CampaignSpec
from zl_core.decisions.status import read_status
from zl_core.foundation.switches import resolve_sides
from zl_core.interface.opspec import OpSpec
from zl_core.report import build
from zl_core.store.record import read_campaign
from zl_core.store.screen_table import read_screen


def settings():
    return CellSettings(python=sys.executable, source=None, shape_file=None, shapes="file",
                        level="core", timer="auto", direct_repeat=1, isolate_tuner_cache=True,
                        timeout_s=60.0, compile_only=False, target=None)


class Reversed:
    """Runs the whole plan, then yields the results last task first (as lanes may)."""

    def __init__(self):
        self.tasks = []

    def run(self, fn, tasks, runtime, *, kept_on=None):
        self.tasks = list(tasks)
        results = list(SerialExecutor("0").run(fn, self.tasks, runtime, kept_on=kept_on))
        yield from reversed(results)


def test_a_screen_hands_every_operator_to_the_executor_as_a_frozen_task(fake_host, tmp_path):
    backend = fake_host.get_backend("fg")
    sides = resolve_sides(backend, None, None, None)
    executor = Reversed()
    ops = [OpSpec.parse(o) for o in ("gemm", "pointwise", "aten")]
    spec = CampaignSpec(provider=fake_host.get_provider("fake"), backend=backend, device="0", sides=sides,
                        ops=ops, settings=settings(), runs_root=tmp_path)
    campaign, rows = run_screen(fake_host, spec, executor=executor)
    assert [t.op.op for t in executor.tasks] == ["gemm", "pointwise", "aten"]
    task = executor.tasks[0]
    assert isinstance(task, ScreenTask) and attrs.has(type(task))
    assert pickle.loads(pickle.dumps(task)) == task  # what travels to another process
    assert "device" not in attrs.fields_dict(ScreenTask)  # the executor's lane names it
    a, b = task.request(Lane("3"), "A"), task.request(Lane("3"), "B")
    assert b.replay_from == a.out_dir == campaign / "gemm" / "A" and (a.device, b.device) == ("3", "3")
    assert (a.autotune_mode, b.autotune_mode) == ("record", "replay")
    # Results arrive in any order; the tables keep the plan's.
    assert [r["op"] for r in rows] == [r.op for r in read_screen(campaign)] == ["gemm", "pointwise", "aten"]
    assert [r["verdict"] for r in rows] == ["IR_CHANGED", "NO_IR_DIFF", "NO_TRITON"]


def test_an_ab_task_runs_all_rounds_of_one_operator(fake_host, tmp_path):
    backend = fake_host.get_backend("fg")
    sides = resolve_sides(backend, None, None, None)
    executor = Reversed()
    plan = RoundsPlan(rounds=2, max_rounds=2, allow_no_ir_diff=False, threshold_pct=1.0)
    spec = CampaignSpec(provider=fake_host.get_provider("fake"), backend=backend, device="0", sides=sides,
                        ops=[OpSpec.parse("gemm")], controls=[OpSpec.parse("pointwise")],
                        settings=settings(), plan=plan, runs_root=tmp_path)
    campaign, runs = run_ab(fake_host, spec, executor=executor)
    assert [(t.op.op, t.control, t.exempt_no_ir_diff) for t in executor.tasks] == [
        ("gemm", False, False), ("pointwise", True, True)]
    assert all(isinstance(t, AbTask) and pickle.loads(pickle.dumps(t)) == t for t in executor.tasks)
    assert "device" not in attrs.fields_dict(AbTask)
    first, later = executor.tasks[0].request(Lane("1"), "A", 1), executor.tasks[0].request(Lane("1"), "B", 2)
    assert later.replay_from == first.out_dir == campaign / "gemm" / "r01" / "A" and later.device == "1"
    assert {r.op.op: (r.state, r.rounds_done) for r in runs} == {"gemm": ("done", 2),
                                                                 "pointwise": ("done", 2)}
    cells = [(s.op, s.round, s.side) for s in read_status(campaign)]
    assert cells[:4] == [("gemm", "1", "A"), ("gemm", "1", "B"), ("gemm", "2", "B"), ("gemm", "2", "A")]


def test_an_aa_campaign_is_written_as_kind_aa_and_reported_as_controls(fake_host, tmp_path):
    backend = fake_host.get_backend("fg")
    sides = resolve_sides(backend, None, None, None, aa=True)
    plan = RoundsPlan(rounds=2, max_rounds=2, allow_no_ir_diff=False, threshold_pct=1.0)
    spec = CampaignSpec(provider=fake_host.get_provider("fake"), backend=backend, device="0", sides=sides,
                        ops=[OpSpec.parse("pointwise")], settings=settings(), plan=plan, aa=True,
                        runs_root=tmp_path)
    assert spec.kind == "aa" and attrs.evolve(spec, aa=False).kind == "ab"
    assert attrs.evolve(spec, plan=None).kind == "screen"
    campaign, runs = run_ab(fake_host, spec)
    assert campaign.name.startswith("aa_none_") and read_campaign(campaign).kind == "aa"
    # Identical IR does not stop an A/A operator: it is timed as a control.
    assert runs[0].state == "done" and runs[0].rounds_done == 2
    report = build(campaign)
    assert report["kind"] == "rounds" and report["summary"]["controls"]["aa"] is True
    assert report["summary"]["controls"]["ops"] == ["pointwise"]
