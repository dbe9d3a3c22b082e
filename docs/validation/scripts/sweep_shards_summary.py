"""The figures of docs/validation/2026-12-04-h200-sweep-shards.md, read from a sharded
screen's campaign folder: per operator, side A's `sweep` record, each shard's wall time,
shape slice and pool compiles, side B's replay source, and whether side A's merged record
is exactly the union of the shards' picks.

    python docs/validation/scripts/sweep_shards_summary.py CAMPAIGN [--out summary.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def picks(records: Path) -> dict[str, str]:
    found = {}
    for path in sorted(records.glob("*.json")):
        if path.name != "meta.json":
            for entry in json.loads(path.read_text())["entries"]:
                found[f"{path.name}|{entry['key']}"] = json.dumps(entry["config"], sort_keys=True)
    return found


def summary(campaign: Path) -> dict:
    out: dict = {}
    for a_dir in sorted(campaign.glob("*/A")):
        op = a_dir.parent.name
        a = json.loads((a_dir / "run_identity.json").read_text())
        b = json.loads((a_dir.parent / "B" / "run_identity.json").read_text())
        shards, union = {}, {}
        for shard in sorted((a_dir / "sweep_shards").glob("shard*")):
            ident = json.loads((shard / "run_identity.json").read_text())
            shards[shard.name] = {k: ident.get(k) for k in ("elapsed_s", "rc", "device", "sweep_shard",
                                                            "parallel_compiles", "compile_workers", "start")}
            union.update(picks(shard / "autotune_records"))
        merged = picks(a_dir / "autotune_records")
        out[op] = {"A": {k: a.get(k) for k in ("elapsed_s", "rc", "autotune_mode", "replay_source", "sweep",
                                               "compile_workers", "start")},
                   "B": {k: b.get(k) for k in ("elapsed_s", "rc", "autotune_mode", "replay_source")},
                   "shards": shards, "merged_equals_union_of_shards": merged == union,
                   "merged_keys": len(merged)}
    out["verdicts"] = {r["op"]: r["verdict"] for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("campaign", type=Path)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    text = json.dumps(summary(args.campaign), indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
