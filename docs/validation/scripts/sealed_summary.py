"""The figures a sealed A/B campaign's write-up quotes, read from the campaign folder alone
(no device): each workload's class and why, each side's accuracy counts, whether the control
cell compiled side A's TTGIR, whether the files still match their receipts, and the classes
reaccounted at the sealed launch floor (must equal the sealed ones) and at a higher one
(may only demote).

    python docs/validation/scripts/sealed_summary.py runs/ab_<switch>_<time> [--floor-up 4]

Run it where `zl` is installed; `zl reaccount` writes into a temporary folder, never the run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from zl_core.seal import receipts

#: A class demoted by a stricter rule moves right, never left (zl_core.seal.classes).
ORDER = ("G", "C", "B")


def ttgir_digest(cell: Path) -> tuple[int, str]:
    """(files, SHA-256 of the cell's .ttgir files concatenated in path order)."""
    files = sorted((cell / "ttgir").rglob("*.ttgir"))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    return len(files), digest.hexdigest()[:8]


def reaccount(campaign: Path, floor: int, into: Path) -> dict:
    zl = shutil.which("zl") or sys.exit("no zl on PATH")
    done = subprocess.run([zl, "reaccount", str(campaign), "--out", str(into), "--launch-floor", str(floor)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"zl reaccount at floor {floor} failed: {done.stderr.strip() or done.stdout.strip()}")
    return json.loads((into / "classes.json").read_text())


def correctness(side: dict | None) -> str:
    if side is None:
        return "not run"
    if side.get("problem"):
        return f"problem: {side['problem']}"
    return f"{side['passed']} passed, {side['failed']} failed, {side['skipped']} skipped"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", type=Path)
    parser.add_argument("--floor-up", type=int, default=4, help="launches added to the sealed floor")
    args = parser.parse_args()
    campaign = args.campaign
    sealed = json.loads((campaign / "classes.json").read_text())
    floor = int(sealed["rule"]["launch_floor"])
    print(f"rule: {sealed['rule']}")
    print("op | class | correctness A | correctness B | control TTGIR | why")
    for entry in sealed["classes"]:
        op, ev = entry["op"], entry["evidence"]
        a, c = campaign / op / "r01" / "A", campaign / op / "r01" / "C"
        control = "no control cell"
        if c.is_dir():
            (na, ha), (nc, hc) = ttgir_digest(a), ttgir_digest(c)
            control = f"{'equal' if ha == hc else 'DIFFERS'} (A {na} files {ha}, C {nc} files {hc})"
        print(f"{op} | {entry['class']} | {correctness(ev.get('correctness_a'))} | "
              f"{correctness(ev.get('correctness_b'))} | {control} | {entry['why']}")
    changed = receipts.check(campaign)
    print(f"receipt check: {'every file as receipted' if not changed else '; '.join(changed)}")
    sealed_classes = {e["op"]: e["class"] for e in sealed["classes"]}
    with tempfile.TemporaryDirectory() as tmp:
        same = reaccount(campaign, floor, Path(tmp) / "same")
        same_classes = {e["op"]: e["class"] for e in same["classes"]}
        print(f"reaccount at the sealed floor {floor}: "
              + ("equal to the sealed classes" if same_classes == sealed_classes
                 else f"DIFFERS: {same_classes} vs {sealed_classes}"))
        up = reaccount(campaign, floor + args.floor_up, Path(tmp) / "up")
        moves = [(c["op"], c["sealed"], c["derived"], c["taken"]) for c in up["changes"]]
        promoted = [m for m in moves if m[1] in ORDER and m[3] in ORDER and ORDER.index(m[3]) < ORDER.index(m[1])]
        print(f"reaccount at floor {floor + args.floor_up}: "
              + (", ".join(f"{op} {s} -> {t}" if d == t else f"{op} {s} -> {d} refused (stays {t})"
                           for op, s, d, t in moves) or "no class changed")
              + ("; PROMOTED: " + str(promoted) if promoted else ""))


if __name__ == "__main__":
    main()
