"""Compare a killed-and-resumed screen with uninterrupted screens of the same operators.

Prints the verdicts side by side and counts: operators whose verdicts agree, cells
that had finished before the kill but ran again (their identity's start is after the
kill), cells missing or unfinished, and half-written cells set aside.
Usage: resume_compare.py RESUMED REF [REF ...] --killed-at EPOCH
"""

import argparse
import json
from datetime import datetime, timezone
from pathlib import Path


def verdicts(campaign: Path) -> dict[str, str]:
    return {r["op"]: r["verdict"] for r in json.loads((campaign / "screen.json").read_text())["ops"]}


def epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("resumed", type=Path)
    parser.add_argument("refs", type=Path, nargs="+")
    parser.add_argument("--killed-at", type=float, required=True)
    args = parser.parse_args()
    resumed = verdicts(args.resumed)
    reference: dict[str, str] = {}
    for ref in args.refs:
        reference.update(verdicts(ref))
    meta = json.loads((args.resumed / "campaign.json").read_text())
    print(f"state: {meta.get('state')}")
    equal = 0
    for op in sorted(reference):
        mark = "==" if resumed.get(op) == reference[op] else "!="
        equal += mark == "=="
        print(f"  {op:<12} reference {reference[op]:<11} {mark} resumed {resumed.get(op, '(missing)')}")
    print(f"verdicts equal: {equal}/{len(reference)}")
    # Cells whose status row was written before the kill had finished then.
    rows = [dict(zip(header, line.split("\t"), strict=False))
            for lines in [(args.resumed / "status.tsv").read_text().splitlines()]
            for header in [lines[0].split("\t")] for line in lines[1:]]
    before = {(r["op"], r["side"]) for r in rows if float(r["end"]) < args.killed_at}
    rerun = missing = 0
    for spec in meta["ops"]:
        op = spec.split(":", 1)[0]
        for side in "AB":
            ident_path = args.resumed / op / side / "run_identity.json"
            ident = json.loads(ident_path.read_text()) if ident_path.is_file() else {}
            if not ident.get("finished"):
                missing += 1
            elif (op, side) in before and epoch(ident["started"]) > args.killed_at:
                rerun += 1
    print(f"cells finished before the kill: {len(before)}; status rows: {len(rows)}")
    aside = list((args.resumed / ".aside").rglob("run_identity.json"))
    print(f"finished cells rerun: {rerun}")
    print(f"cells missing: {missing}")
    print(f"half-written cells set aside: {len(aside)}")


if __name__ == "__main__":
    main()
