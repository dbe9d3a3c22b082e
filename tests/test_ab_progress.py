"""The count an A/B campaign shows, ``[finished/planned]``: every cell it runs is in the
plan (both sides of the planned rounds, the control side, each side's accuracy tests),
and an operator that stops early takes its unrun cells out, so the last line reads
``[N/N]``. Real zl processes over the fake 4-GPU host, a frozen campaign."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_lanes_processes import LAUNCHER, fake_env
from test_seal_classes import MANIFEST

COUNTED = re.compile(r"^\[(\d+)/(\d+)\] (\S+) (.*)$")


@pytest.mark.slow
def test_the_count_covers_controls_and_checks_and_drops_what_an_early_stop_leaves(tmp_path: Path):
    # gconv runs everything; abs has identical TTGIR, so its timing stops after round 1 and
    # its control, and its checks still run; crash fails round 1 (no control, no checks).
    ops = ("gconv", "abs", "crash")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(MANIFEST + "".join(f"  - op: {op}\n" for op in ops))
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.05", ZL_FAKE_OPS=" ".join(ops))

    def zl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(LAUNCHER), *args], env=env, capture_output=True,
                              text=True, check=False, timeout=180)

    assert zl("freeze", str(manifest), "--out", str(tmp_path / "frozen")).returncode == 0
    done = zl("ab", "--manifest", str(tmp_path / "frozen"), "--telemetry-interval", "0")
    assert done.returncode == 6, done.stderr  # a campaign where cells failed never exits 0
    assert "ab FAKE_SWITCH on ab_" in done.stderr and ": 33 cells planned" in done.stderr  # 3 x (8 + 1 + 2)
    counted = [line for line in done.stderr.splitlines()
               if COUNTED.match(line) and not line.endswith(" running ...")]
    cells = [COUNTED.match(line).groups() for line in counted if "planned cell(s) not run" not in line]
    # gconv: 8 round cells, its control, 2 checks; abs: round 1, its control, 2 checks;
    # crash: round 1.
    assert [int(n) for n, *_ in cells] == list(range(1, 11 + 5 + 2 + 1))
    assert all(int(n) <= int(total) for n, total, *_ in cells)
    assert [(op, rest.split(":")[0]) for _, _, op, rest in cells if rest.startswith("check ")] == \
        [("gconv", "check A"), ("gconv", "check B"), ("abs", "check A"), ("abs", "check B")]
    assert all("rc=0" in rest for *_, rest in cells if rest.startswith("check "))
    # An operator that stops early says how many planned cells it leaves, and the count ends whole.
    assert "[16/27] abs: 6 planned cell(s) not run (identical TTGIR after round 1)" in counted
    assert counted[-1] == "[18/18] crash: 9 planned cell(s) not run (round 1 side A,B failed or timed out)"
