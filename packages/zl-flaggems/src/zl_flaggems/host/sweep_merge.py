"""Sweep shards of a FlagGems cell: did they cover the shape set, and their picks merged.

Each shard cell sliced every benchmark's shapes (``cell/plugins/shapes.py``, after FlagGems
settled them: the shape file, the class's own list, the comprehensive merge) and wrote
what it saw under ``sweep_shard`` in its identity: per benchmark, how many shapes the
whole set had, a digest of that set, and how many were its own. The shards stand in
for one serial sweep only if every shard saw the same benchmarks with the same shape
sets, and their slices add up to each set; their records must come from one backend,
vendor and Triton. The merged record is one ``autotune_records/`` in the format side B
replays (:mod:`zl_flaggems.common.autotune_records`); a key two shards tuned differently keeps
the lowest shard's pick and is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from zl_core.interface import caliber
from zl_core.interface.provider import ShardMerge

from zl_flaggems.common.autotune_records import (
    RECORDS_DIR,
    AutotuneRecorder,
    TunerId,
    config_identity,
    read_meta,
    read_records,
    write_meta,
)

IDENTITY_KEY = "sweep_shard"
META_FIELDS = ("backend", "flaggems_vendor", "triton_version")


def _coverage_problem(recorded: Sequence[object]) -> str:
    seen: list[dict] = []
    for i, info in enumerate(recorded):
        if not isinstance(info, dict) or not isinstance(info.get("ops"), dict):
            return f"shard {i} recorded no shape slice (its benchmark never settled its shapes)"
        seen.append(info)
    first = seen[0]["ops"]
    for i, info in enumerate(seen[1:], start=1):
        if set(info["ops"]) != set(first):
            return (f"shard {i} ran benchmarks {sorted(info['ops'])}, shard 0 {sorted(first)}; "
                    "the shards saw different tests")
    for name, ref in sorted(first.items()):
        if not isinstance(ref.get("total"), int):
            return f"benchmark {name}'s shapes are not a list the shards could split"
        for i, info in enumerate(seen):
            got = info["ops"][name]
            if got.get("total") != ref["total"] or got.get("digest") != ref.get("digest"):
                return f"benchmark {name}: shard {i} saw another shape set than shard 0"
        covered = sum(int(info["ops"][name].get("mine") or 0) for info in seen)
        if covered != ref["total"]:
            return f"benchmark {name}: the shards swept {covered} of its {ref['total']} shapes"
    return ""


def merge_shards(shard_cells: Sequence[Path], into: Path) -> ShardMerge:
    """Check the finished shard cells and write their merged picks under ``into``."""
    idents = [caliber.read_identity(Path(c)) or caliber.CellIdentity() for c in shard_cells]
    problem = _coverage_problem([ident.get(IDENTITY_KEY) for ident in idents])
    if problem:
        return ShardMerge(problem=problem)
    metas = [read_meta(Path(c) / RECORDS_DIR) for c in shard_cells]
    known = [(i, m) for i, m in enumerate(metas) if m is not None]
    if not known:
        return ShardMerge(problem="no shard recorded any autotune pick (nothing was tuned)")
    ref_i, ref = known[0]
    for i, meta in known[1:]:
        differ = [f for f in META_FIELDS if meta.get(f) != ref.get(f)]
        if differ:
            return ShardMerge(problem=f"shard {i} recorded under another {', '.join(differ)} than "
                                      f"shard {ref_i}")
    recorder = AutotuneRecorder(Path(into) / RECORDS_DIR, autowrite=False)
    chosen: dict[tuple[str, str], int] = {}
    conflicts: list[str] = []
    for i, cell in enumerate(shard_cells):
        for tuner, data in read_records(Path(cell) / RECORDS_DIR).items():
            tid = TunerId(kernel=data["kernel"], tuner=tuner, tuner_class=data["tuner_class"])
            for key, config in sorted(data["entries"].items()):
                where = (tuner, key)
                if where not in chosen:
                    chosen[where] = i
                    recorder.observe(tid, key, config, data["sweeps"].get(key))
                    continue
                kept = recorder.recorded(tuner, key) or {}
                if config_identity(kept) != config_identity(config):
                    conflicts.append(f"{data['kernel']} key {key}: shard {chosen[where]} picked "
                                     f"{config_identity(kept)}, shard {i} {config_identity(config)}")
    Path(into, RECORDS_DIR).mkdir(parents=True, exist_ok=True)
    write_meta(Path(into) / RECORDS_DIR, backend=str(ref.get("backend") or ""),
               flaggems_vendor=str(ref.get("flaggems_vendor") or ""),
               triton_version=str(ref.get("triton_version") or ""), op=str(ref.get("op") or ""))
    recorder.flush()
    return ShardMerge(entries=recorder.keys_recorded,
                      conflicts=tuple(conflicts))
