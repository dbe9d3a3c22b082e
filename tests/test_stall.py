"""A cell that makes no progress ends as STALLED within its window, with the Python stacks
of its process on disk; a cell busy without printing (it beats its progress file) does not
(real cell processes: tests/fake_cell.py under zl's cell guard)."""

from __future__ import annotations

import time

import attrs
import pytest
from own_processes import holding
from test_campaign_engine import engine_parts, fake_spec, settings
from zl_core.campaigns.screen_campaign import run_screen
from zl_core.cells.cell import EXIT_STALLED, run_cell
from zl_core.decisions.ir_verdict import STALLED
from zl_core.decisions.status import read_status
from zl_core.interface import caliber
from zl_core.interface.opspec import OpSpec


def stall_settings(window: float, timeout: float = 120.0):
    return attrs.evolve(settings(timeout=timeout), stall_timeout_s=window)


@pytest.mark.slow
def test_a_silent_cell_stalls_with_its_stacks_on_disk(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    req = stall_settings(2.0).request(op=OpSpec.parse("hang"), backend=backend, device="0",
                                      out_dir=tmp_path / "cell", env={}, side="A",
                                      autotune_mode="record", replay_from=None)
    out = run_cell(fake_host, provider, req)
    assert out.stalled and out.timed_out and out.rc == EXIT_STALLED
    assert out.elapsed_s < 120  # the stall window ended it, not the timeout
    stacks = (out.cell_dir / "stacks.txt").read_text()
    assert "most recent call first" in stacks and "fake_cell.py" in stacks
    ident = caliber.read_identity(out.cell_dir)
    assert ident["stalled"] is True and ident["stacks"] == "stacks.txt"
    assert ident["longest_silence_s"] >= 2.0
    assert "CELL_STALLED" in (out.cell_dir / "run.log").read_text()
    time.sleep(0.5)  # the sleeping grandchild went with its group
    assert holding(tmp_path) == []


@pytest.mark.slow
def test_a_cell_that_beats_without_printing_is_not_stalled(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    req = stall_settings(1.5).request(op=OpSpec.parse("quietwork"), backend=backend, device="0",
                                      out_dir=tmp_path / "cell", env={}, side="A",
                                      autotune_mode="record", replay_from=None)
    out = run_cell(fake_host, provider, req)
    assert out.ok and not out.stalled and out.success_rows == 2
    ident = caliber.read_identity(out.cell_dir)
    assert ident["stalled"] is False and "stacks" not in ident
    assert 0 < ident["longest_silence_s"] < 1.5
    assert not (out.cell_dir / ".zl_progress").exists()  # the beat file is scratch


def test_without_a_window_only_the_timeout_ends_a_cell(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    req = stall_settings(0.0, timeout=2.0).request(op=OpSpec.parse("hang"), backend=backend,
                                                   device="0", out_dir=tmp_path / "cell", env={},
                                                   side="A", autotune_mode="record", replay_from=None)
    out = run_cell(fake_host, provider, req)
    assert out.timed_out and not out.stalled and out.rc == 124


@pytest.mark.slow
def test_a_stalled_operator_is_named_in_the_screen_and_status(fake_host, tmp_path):
    ops = [OpSpec.parse(s) for s in ("hang", "pointwise")]
    campaign, rows = run_screen(fake_host, fake_spec(fake_host, ops, stall_settings(2.0), tmp_path))
    verdicts = {r["op"]: r["verdict"] for r in rows}
    assert verdicts == {"hang": STALLED, "pointwise": "NO_IR_DIFF"}
    hang = next(r for r in rows if r["op"] == "hang")
    assert "stacks.txt" in hang["notes"]
    status = {(s.op, s.side): s for s in read_status(campaign)}
    assert status[("hang", "A")].stalled == "1" and status[("hang", "A")].rc == "125"
    assert ("hang", "B") not in status  # B never runs after a stalled A
    assert status[("pointwise", "A")].stalled == "0"
    assert (campaign / "hang" / "A" / "stacks.txt").is_file()
