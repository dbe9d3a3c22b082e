"""Where a cell's time goes: the phase clock, the record in every cell's identity, and the
report's "where the time went" (real cell processes; the FlagGems cells are real pytest
runs on the fake checkout with zl's plugins)."""

from __future__ import annotations

import json
import os
import threading

import pytest
from test_campaign_engine import engine_parts, fake_spec, settings
from zl_core.campaigns.screen_campaign import run_screen
from zl_core.cells.cell import compile_workers, run_cell
from zl_core.interface import caliber, contract, phases
from zl_core.interface.opspec import OpSpec
from zl_core.report import build_screen
from zl_report import render


class Ticks:
    """A clock the test moves by hand."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_nested_phases_are_counted_once():
    now = Ticks()
    clock = phases.PhaseClock(now=now)
    clock.enter(phases.COLLECTION)
    now.t = 1.0
    with clock.phase(phases.START):  # an import inside collection is start time, not both
        now.t = 4.0
    now.t = 5.0
    clock.credit(phases.COMPILATION, 0.5)  # a compile reported after it ran inside collection
    clock.leave(phases.COLLECTION)
    assert clock.seconds == {phases.START: 3.0, phases.COLLECTION: 1.5, phases.COMPILATION: 0.5}
    clock.move(phases.COLLECTION, phases.REFERENCE, 9.0)  # never more than the source had
    assert clock.seconds[phases.COLLECTION] == 0.0 and clock.seconds[phases.REFERENCE] == 1.5


def test_credits_from_other_threads_are_kept_apart():
    # The compile pool's workers report compiles that overlap each other and the owner's
    # own wait for them: counted as phases, they would add up to more than the wall time.
    now = Ticks()
    clock = phases.PhaseClock(now=now)
    with clock.phase(phases.COMPILATION):
        workers = [threading.Thread(target=clock.credit, args=(phases.COMPILATION, 3.0)) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        now.t = 4.0
    assert clock.seconds == {phases.COMPILATION: 4.0}
    assert clock.off_thread == {phases.COMPILATION: 12.0}


def test_assembled_phases_add_up_to_the_wall_time():
    record = phases.cell_record({phases.START: 2.0, phases.OPERATOR: 3.0, phases.TEARDOWN: 0.5},
                                started_epoch=101.0, final=True)
    record["written"] = 107.0
    out = phases.assemble(wall_s=10.0, preflight_s=0.25, spawned=100.0, exited=107.75, cell=record)
    s = out["seconds"]
    assert out["complete"] and s[phases.START] == 3.0 and s[phases.TEARDOWN] == 1.25
    assert s[phases.AUTOTUNE] is None and phases.AUTOTUNE in out["unknown"]
    known = sum(v for v in s.values() if v is not None)
    assert known == pytest.approx(10.0)
    # A cell killed after its last record: teardown unknown, the rest is 'other'.
    record["final"] = False
    cut = phases.assemble(wall_s=10.0, preflight_s=0.25, spawned=100.0, exited=107.75, cell=record)
    assert not cut["complete"] and cut["seconds"][phases.TEARDOWN] is None
    assert cut["seconds"][phases.OTHER] == pytest.approx(10.0 - 0.25 - 3.0 - 3.0)
    # No record at all (a provider that keeps no clock): everything but preflight is 'other'.
    bare = phases.assemble(wall_s=4.0, preflight_s=1.0, spawned=100.0, exited=103.0, cell=None)
    assert bare["seconds"][phases.OTHER] == 3.0 and set(bare["unknown"]) >= set(phases.CELL_PHASES)


def test_every_cell_of_a_screen_records_its_phases_and_the_report_sums_them(fake_host, tmp_path):
    ops = [OpSpec.parse(s) for s in ("gemm", "pointwise")]
    campaign, _ = run_screen(fake_host, fake_spec(fake_host, ops, settings(), tmp_path))
    walls = 0.0
    for op in ("gemm", "pointwise"):
        for side in "AB":
            ident = caliber.read_identity(campaign / op / side)
            record = ident[phases.KEY]
            assert record["complete"], record
            assert record["wall_s"] == pytest.approx(ident["elapsed_s"], abs=0.002)
            known = sum(v for v in record["seconds"].values() if v is not None)
            assert known == pytest.approx(record["wall_s"], abs=0.01)
            assert record["seconds"][phases.START] > 0  # the interpreter's start is never free
            walls += record["wall_s"]
            assert ident["compile_workers"] == compile_workers(0)  # the default, resolved
    model = build_screen(campaign)
    spent = model["summary"]["time_spent"]
    assert spent["cells"] == 4 and spent["cells_without_phases"] == 0
    assert spent["wall_s"] == pytest.approx(walls, abs=0.01)
    assert set(spent["by_side"]) == {"A", "B"} and len(spent["slowest"]) == 4
    text = render(model, "text")
    assert "Where the time went" in text and "interpreter start and imports" in text
    assert "Where the time went" in render(model, "html")
    assert "Where the time went" not in render(model, "md")  # the pull-request form


def test_the_compile_pools_default_is_the_hosts_cores_up_to_the_cap(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)), raising=False)
    assert compile_workers(0) == contract.COMPILE_WORKERS_CAP
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert compile_workers(0) == 1  # one core: no pool
    assert compile_workers(3) == 3  # asked for: as asked, cap or not


def test_a_cell_without_phases_is_counted_apart_not_guessed(fake_host, tmp_path):
    campaign, _ = run_screen(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm")], settings(), tmp_path))
    ident = caliber.read_identity(campaign / "gemm" / "B").to_json()  # a copy to edit
    del ident[phases.KEY]  # as a cell of an older zl left it
    caliber.write_identity(campaign / "gemm" / "B", ident)
    spent = build_screen(campaign)["summary"]["time_spent"]
    assert spent["cells"] == 2 and spent["cells_without_phases"] == 1
    a = caliber.read_identity(campaign / "gemm" / "A")[phases.KEY]
    assert spent["wall_s"] == pytest.approx(a["wall_s"], abs=0.002)


def test_a_killed_cell_keeps_what_it_measured(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    req = settings(timeout=2.0).request(op=OpSpec.parse("hang"), backend=backend, device="0",
                                        out_dir=tmp_path / "cell", env={}, side="A",
                                        autotune_mode="record", replay_from=None)
    out = run_cell(fake_host, provider, req)
    record = caliber.read_identity(out.cell_dir)[phases.KEY]
    assert out.timed_out and not record["complete"]
    assert record["seconds"][phases.OTHER] > 1.5  # the hang, in no phase a cell named


fake_flaggems = pytest.importorskip("fake_flaggems")


def test_flaggems_cell_separates_collection_timing_and_teardown(tmp_path):
    pytest.importorskip("triton")
    fg = fake_flaggems.build(tmp_path / "FlagGems")
    proc = fake_flaggems.run_cell(fg, tmp_path / "cell", "benchmark/test_fake.py::test_fakeadd")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((tmp_path / "cell" / "run_identity.json").read_text())[phases.CELL_KEY]
    s = record["seconds"]
    assert record["final"]
    for name in (phases.START, phases.COLLECTION, phases.REFERENCE, phases.OPERATOR, phases.TEARDOWN):
        assert s[name] is not None and s[name] > 0, (name, s)
    # The fake's torch reference and its kernel are timed by the same loop, once per row each:
    # the two phases are of one size (a few ms each, so a loaded host moves each by itself;
    # a timing given to the wrong phase leaves the other near nothing).
    assert 0.25 <= s[phases.REFERENCE] / s[phases.OPERATOR] <= 4.0, s
