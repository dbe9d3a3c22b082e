"""The kept H200 campaigns under today's rules, against the report.json each kept.

    python3 docs/validation/scripts/rejudge.py [docs/validation/data]

Unpacks every campaign archive of the data folder into a temporary folder, renders it
with `zl report DIR --json --out NEW` (the zl on PATH), and prints, per campaign, the
rules each judgement used (`summary.plan.rules`; none recorded means version 1), each
operator's verdict before and after, and each shape's verdict, estimate and interval
with the variance model now used. Nothing is written beside the archives.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path


def show(stats: dict | None) -> str:
    if not stats or stats.get("ci_low_pct") is None:
        return f"{(stats or {}).get('verdict')} [-]"
    est = stats.get("estimate_pct", stats.get("median_delta_pct"))
    return f"{stats['verdict']} {est:+.2f}% [{stats['ci_low_pct']:+.2f}, {stats['ci_high_pct']:+.2f}]"


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/validation/data")
    with tempfile.TemporaryDirectory() as tmp:
        for archive in sorted(data.glob("*.tgz")):
            where = Path(tmp) / archive.stem
            with tarfile.open(archive) as tar:
                tar.extractall(where, filter="data")
            for meta in sorted(where.rglob("campaign.json")):
                root = meta.parent
                if not (root / "report.json").is_file():
                    continue
                old = json.loads((root / "report.json").read_text())
                out = Path(tmp) / f"{root.name}-new.json"
                subprocess.run(["zl", "report", str(root), "--json", "--out", str(out)],
                               capture_output=True, text=True, check=False)
                new = json.loads(out.read_text())
                print(f"## {archive.name}: {root.name}")
                print(f"rules {old['summary'].get('plan', {}).get('rules', 1)} -> "
                      f"{new['summary']['plan'].get('rules')}")
                before = {o["op"]: o for o in old["summary"]["operators"]}
                for o in new["summary"]["operators"]:
                    was = before.get(o["op"], {})
                    print(f"  {o['op']} ({o.get('rounds')} rounds): {was.get('verdict')} -> {o['verdict']}")
                rows = {(r["op"], r["shape"]): r for r in old["rows"] if r.get("stats")}
                for row in new["rows"]:
                    stats = row.get("stats")
                    if not stats:
                        continue
                    was = rows.get((row["op"], row["shape"]), {}).get("stats")
                    why = next((n for n in stats.get("notes", []) if "verdict needs" in n), "")
                    df = stats.get("df")
                    print(f"    {row['op']} {row['shape']}: {show(was)} -> {show(stats)}"
                          f" (df {df if df is None else round(df, 1)}, {stats.get('variance')})"
                          + (f" {why}" if why else ""))
                print()


if __name__ == "__main__":
    main()
