"""FlagGems sweep shards on the fake checkout: real pytest cells with zl's plugins, an
operator behind a real Triton Autotuner; each shard sweeps its slice of the settled
shapes, the merge checks coverage, and a replay of the merged record needs no sweep."""

from __future__ import annotations

import json

import fake_flaggems
import pytest
from zl_core.interface import contract
from zl_flaggems.common.autotune_records import AutotuneRecorder, TunerId, read_records, write_meta
from zl_flaggems.host.sweep_merge import merge_shards

pytest.importorskip("triton")

NODE = "benchmark/test_fake_tuned.py::test_faketuned"
PLUGINS = (*fake_flaggems.ZL_PLUGINS, "autotune")


@pytest.fixture(scope="module")
def fg(tmp_path_factory):
    return fake_flaggems.build(tmp_path_factory.mktemp("fg") / "FlagGems")


def cell(fg, path, **env):
    proc = fake_flaggems.run_cell(fg, path, NODE, plugins=PLUGINS, extra_env={"ZL_BACKEND": "fakegpu", **env})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def picks(cell_dir):
    (record,) = read_records(cell_dir / "autotune_records").values()
    return record["entries"]


@pytest.mark.slow
def test_shards_cover_the_shapes_and_their_merge_replays_like_the_serial_sweep(fg, tmp_path):
    serial = tmp_path / "serial"
    cell(fg, serial, ZL_AUTOTUNE_MODE="record")
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, shard in enumerate(shards):
        cell(fg, shard, ZL_AUTOTUNE_MODE="record", ZL_SWEEP_SHARD=f"{i}/2")
    seen = [json.loads((s / "run_identity.json").read_text())["sweep_shard"] for s in shards]
    assert [s["ops"]["faketuned"]["mine"] for s in seen] == [3, 2]  # every 2nd of 5 shapes
    assert {s["ops"]["faketuned"]["total"] for s in seen} == {5}
    assert len(picks(shards[0])) + len(picks(shards[1])) == len(picks(serial)) == 10  # 5 shapes x 2 dtypes
    merged = merge_shards(shards, tmp_path / "merged")
    assert merged.problem == "" and merged.entries == 10 and merged.conflicts == ()
    assert picks(tmp_path / "merged") == picks(serial)  # the same picks as one serial sweep
    replay = cell(fg, tmp_path / "replay", ZL_AUTOTUNE_MODE="replay",
                  ZL_REPLAY_DIR=str(tmp_path / "merged" / "autotune_records"))
    assert contract.AUTOTUNE_REPLAY_FALLBACK not in replay.stdout


@pytest.mark.slow
def test_a_missing_shard_or_a_shard_of_another_shape_set_is_a_problem(fg, tmp_path):
    shards = [tmp_path / f"shard{i}" for i in range(3)]
    for i, shard in enumerate(shards):
        cell(fg, shard, ZL_AUTOTUNE_MODE="record", ZL_SWEEP_SHARD=f"{i}/3")
    hole = merge_shards(shards[:2], tmp_path / "m1")
    assert hole.problem == "benchmark faketuned: the shards swept 4 of its 5 shapes"
    assert not (tmp_path / "m1").exists()  # nothing merged from a hole
    ident = json.loads((shards[2] / "run_identity.json").read_text())
    ident["sweep_shard"]["ops"]["faketuned"]["digest"] = "0" * 16
    (shards[2] / "run_identity.json").write_text(json.dumps(ident))
    other = merge_shards(shards, tmp_path / "m2")
    assert other.problem == "benchmark faketuned: shard 2 saw another shape set than shard 0"
    del ident["sweep_shard"]
    (shards[2] / "run_identity.json").write_text(json.dumps(ident))
    assert merge_shards(shards, tmp_path / "m3").problem.startswith("shard 2 recorded no shape slice")


def _shard_cell(path, index, picks_by_key, *, vendor="nvidia"):
    records = path / "autotune_records"
    write_meta(records, backend="cuda", flaggems_vendor=vendor, triton_version="3.6.0", op="mm")
    rec = AutotuneRecorder(records)
    tuner = TunerId(kernel="mm_kernel", tuner="ops.mm.mm_kernel")
    for key, block in picks_by_key.items():
        rec.observe(tuner, key, {"kwargs": {"BLOCK": block}, "num_warps": 4})
    (path / "run_identity.json").write_text(json.dumps({"sweep_shard": {
        "index": index, "count": 2, "ops": {"mm": {"total": 2, "digest": "d", "mine": 1}}}}))
    return path


def test_winners_that_differ_across_shards_are_reported_and_the_lowest_kept(tmp_path):
    a = _shard_cell(tmp_path / "a", 0, {"[64]": 32, "[128]": 64})
    b = _shard_cell(tmp_path / "b", 1, {"[128]": 128, "[256]": 64})
    merged = merge_shards([a, b], tmp_path / "m")
    assert merged.problem == "" and merged.entries == 3
    (conflict,) = merged.conflicts
    assert conflict.startswith("mm_kernel key [128]: shard 0 picked") and "shard 1" in conflict
    assert picks(tmp_path / "m")["[128]"]["kwargs"] == {"BLOCK": 64}
    vendor = _shard_cell(tmp_path / "c", 1, {"[256]": 64}, vendor="amd")
    assert merge_shards([a, vendor], tmp_path / "m4").problem == (
        "shard 1 recorded under another flaggems_vendor than shard 0")
