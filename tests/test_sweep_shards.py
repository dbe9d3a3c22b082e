"""A recording cell's sweep sharded over several devices (zl_core.cells.sweep_shards): shards
run as real cell processes (tests/fake_cell.py, the fake provider of conftest.py), their
picks merged, the cell measured alone replaying them; a shard that fails, or a merged
record with a hole, falls back to the serial sweep and says so."""

from __future__ import annotations

import attrs
from test_campaign_engine import engine_parts, fake_spec, settings
from zl_core.campaigns.screen_campaign import run_screen
from zl_core.cells import sweep_shards
from zl_core.cells.cell import run_cell
from zl_core.interface import caliber, contract
from zl_core.interface.opspec import OpSpec


def sharded(fake_host, tmp_path, op, devices=("0", "0")):
    backend, provider, sides = engine_parts(fake_host)
    req = attrs.evolve(settings(), sweep_devices=devices).request(
        op=OpSpec.parse(op), backend=backend, device="0", out_dir=tmp_path / op / "A",
        env=sides.env("A"), side="A", autotune_mode="record", replay_from=None)
    lines: list[str] = []
    out = sweep_shards.run_sharded(fake_host, provider, req, say=lines.append,
                                   run=lambda r: run_cell(fake_host, provider, r))
    return out, caliber.read_identity(out.cell_dir), lines


def test_shards_sweep_then_the_cell_measures_alone_replaying_their_merged_picks(fake_host, tmp_path):
    out, ident, lines = sharded(fake_host, tmp_path, "gemm")
    cell = out.cell_dir
    assert out.ok and out.success_rows == 2
    sweep = ident["sweep"]
    assert sweep["mode"] == "sharded" and sweep["devices"] == ["0", "0"] and sweep["shards"] == 2
    assert sweep["conflicts"] == ["kernel key (64,): shard 0 picked 64, shard 1 32"]
    assert any("picked differently for 1 key" in line for line in lines)  # reported, not hidden
    assert any(line.startswith("gemm A: 2 shards swept in") for line in lines)
    # The picks are this cell's own record, in the format side B replays.
    assert ident["autotune_mode"] == "record" and ident["replay_source"] is None
    assert (cell / "autotune_records" / "kernel.json").is_file()
    assert not out.markers.get(contract.AUTOTUNE_REPLAY_FALLBACK)
    for i in range(2):
        shard = caliber.read_identity(cell / "sweep_shards" / f"shard{i}")
        assert shard["sweep_shard"] == {"index": i, "count": 2} and shard["device"] == "0"
    assert not (tmp_path / "gemm" / "A.sweep").exists()  # moved into the cell
    assert not any(contract.SWEEP_SHARD_FALLBACK in line for line in lines)


def test_a_shard_that_fails_falls_back_to_the_serial_sweep_and_says_so(fake_host, tmp_path):
    out, ident, lines = sharded(fake_host, tmp_path, "shardfail")
    assert out.ok  # the serial sweep measured it
    assert ident["sweep"]["mode"] == "serial" and ident["sweep"]["fallback"] == "shard 1 ended rc=3"
    assert ident["autotune_mode"] == "record" and ident.get("sweep_shard") is None
    said = [line for line in lines if line.startswith(contract.SWEEP_SHARD_FALLBACK)]
    assert said == ["SWEEP_SHARD_FALLBACK op=shardfail reason=shard 1 ended rc=3; sweeping serially on 0"]
    assert (out.cell_dir / "sweep_shards" / "shard1" / "run.log").is_file()  # kept as evidence


def test_a_hole_in_the_merged_picks_discards_the_sharded_measurement(fake_host, tmp_path):
    out, ident, lines = sharded(fake_host, tmp_path, "shardhole")
    assert out.ok and ident["sweep"]["mode"] == "serial"
    assert ident["sweep"]["fallback"] == "the merged picks missed 1 key(s) the measurement needed"
    assert ident["autotune_mode"] == "record"
    measured = out.cell_dir / "sweep_shards" / "measured"
    assert caliber.read_identity(measured)["autotune_mode"] == "replay"  # set aside, not counted
    assert any(line.startswith(contract.SWEEP_SHARD_FALLBACK) for line in lines)


def test_a_screen_shards_side_a_and_side_b_replays_it_unchanged(fake_host, tmp_path):
    s = attrs.evolve(settings(), sweep_devices=("0", "0"))
    campaign, rows = run_screen(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm")], s, tmp_path))
    a = caliber.read_identity(campaign / "gemm" / "A")
    b = caliber.read_identity(campaign / "gemm" / "B")
    assert a["sweep"]["mode"] == "sharded" and "sweep" not in b  # side B replays, nothing to shard
    assert b["autotune_mode"] == "replay" and b["replay_source"] == str((campaign / "gemm" / "A").resolve())
    assert rows[0]["verdict"] == "IR_CHANGED"  # the fake gemm's TTGIR follows the switch
    assert not caliber.compare({"A": a, "B": b}).problems


def test_one_device_or_a_replaying_cell_is_never_sharded(fake_host, tmp_path):
    backend, _, _ = engine_parts(fake_host)
    one = attrs.evolve(settings(), sweep_devices=("0",))
    two = attrs.evolve(settings(), sweep_devices=("0", "1"))
    kw = {"op": OpSpec.parse("gemm"), "backend": backend, "device": "0", "out_dir": tmp_path / "c",
          "env": {}, "side": "A"}
    assert not sweep_shards.wanted(one.request(**kw, autotune_mode="record", replay_from=None))
    assert sweep_shards.wanted(two.request(**kw, autotune_mode="record", replay_from=None))
    assert not sweep_shards.wanted(two.request(**kw, autotune_mode="replay", replay_from=tmp_path))
