"""The lanes executor with real cells on four fake CUDA devices (tests/fake_lanes)."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import pytest
from zl_core.campaigns.dask_executor import homed
from zl_core.campaigns.executor import Lane, SerialExecutor
from zl_core.campaigns.lanes import LanesExecutor, longest_first
from zl_core.interface.opspec import OpSpec

FAKES = Path(__file__).with_name("fake_lanes")
sys.path.insert(0, str(FAKES))
from zl_fake_lanes import PairTask, Runtime, pair_requests, run_pair


class ListSink:
    def __init__(self):
        self.lines = []

    def line(self, text):
        self.lines.append(text)


def pair_tasks(host, root: Path, names) -> list[PairTask]:
    cuda = host.get_backend("cuda")
    return [PairTask(op=OpSpec.parse(name), backend=cuda, python=sys.executable, root=root)
            for name in names]


def read_ledger(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()]


def test_four_lanes_run_every_task_once_one_cell_per_device_an_operator_on_one_device(lanes_host, tmp_path):
    names = ["abs", "add", "mul", "sub", "exp", "log", "sin", "cos"]
    executor = LanesExecutor("cuda", ["0", "1", "2", "3"])
    results = list(executor.run(run_pair, pair_tasks(lanes_host, tmp_path / "c", names),
                                Runtime(host=lanes_host, sink=ListSink())))
    assert sorted(r[0].cell_dir.parent.name for r in results) == sorted(names)
    assert all(o.ok for pair in results for o in pair)
    events = read_ledger(tmp_path / "ledger.tsv")
    starts = [e for e in events if e[0] == "start"]
    assert len(starts) == 2 * len(names)  # each cell ran exactly once
    devices_by_op = {}
    for event in starts:
        devices_by_op.setdefault(event[2], set()).add(event[1])
    assert all(len(d) == 1 for d in devices_by_op.values())  # A and B on the same device
    assert len(set().union(*devices_by_op.values())) == 4  # every lane worked
    # No two cells overlapped on one device: each device's start/end events alternate.
    for device in "0123":
        sequence = [e[0] for e in events if e[1] == device]
        assert sequence == ["start", "end"] * (len(sequence) // 2)


def test_a_device_held_by_another_process_is_left_alone(lanes_host, tmp_path):
    from zl_core.cells.devicelock import DeviceLock

    other = DeviceLock("cuda", "1")
    assert other.try_acquire()
    try:
        sink = ListSink()
        list(LanesExecutor("cuda", ["0", "1"]).run(run_pair, pair_tasks(lanes_host, tmp_path / "c", ["abs", "add"]),
                                                   Runtime(host=lanes_host, sink=sink)))
    finally:
        other.release()
    devices = {e[1] for e in read_ledger(tmp_path / "ledger.tsv")}
    assert devices == {"0"}
    assert any("cuda:1: device busy" in line for line in sink.lines)


def test_longest_known_tasks_go_first_and_unknown_ones_keep_plan_order():
    tasks = [PairTask(op=OpSpec.parse(n), backend=None, python="", root=Path()) for n in ("a", "b", "c", "d")]
    ordered = longest_first(tasks, {"c": 30.0, "a": 10.0})
    assert [t.op.op for t in ordered] == ["c", "b", "d", "a"]  # b, d at the mean (20 s)
    assert longest_first(tasks, {}) == tasks


def test_a_lane_places_every_cell_and_results_come_home_with_only_their_own_paths(lanes_host, tmp_path):
    task = pair_tasks(lanes_host, tmp_path / "camp", ["abs"])[0]
    a, b = pair_requests(task, Lane("3"))
    assert (a.device, b.device) == ("3", "3") and b.replay_from == tmp_path / "camp" / "abs" / "A"
    a, b = pair_requests(task, Lane("1", cell_root=Path("/scratch/camp")))  # a Dask worker's copy
    assert b.out_dir == Path("/scratch/camp/abs/B") and b.replay_from == Path("/scratch/camp/abs/A")
    assert a.python == sys.executable  # a path outside the campaign stays
    back = homed([a, {"cell": str(b.out_dir)}], Path("/scratch/camp"), tmp_path / "camp")
    assert back[0].out_dir == tmp_path / "camp" / "abs" / "A" and back[0].python == sys.executable
    assert back[1] == {"cell": str(tmp_path / "camp" / "abs" / "B")}


def test_the_serial_lane_is_its_device_or_where_a_resumed_operators_kept_cells_ran(lanes_host, tmp_path):
    tasks = pair_tasks(lanes_host, tmp_path, ["abs", "add"])
    lanes = list(SerialExecutor("2").run(lambda task, lane, _rt: (task.op.op, lane), tasks, None,
                                         kept_on={"add": "5"}))
    assert lanes == [("abs", Lane("2")), ("add", Lane("5"))]


def test_progress_tells_the_time_left_and_lanes_say_what_they_run(lanes_host, tmp_path, monkeypatch,
                                                                  caplog):
    from zl_core.campaigns import progress as progress_module

    caplog.set_level(logging.INFO, logger="zl_core.campaigns.progress")
    clock = iter([100.0, 130.0, 160.0])
    with monkeypatch.context() as patched:  # time is one module: unpatch it before cells run and wait
        patched.setattr(progress_module.time, "monotonic", lambda: next(clock))
        bar = progress_module.Progress(4, "screen x")
        bar.advance("abs A")  # 30 s for 1 cell: 3 cells left -> 90 s
        bar.advance("abs B")  # 60 s for 2 cells: 2 left -> 60 s
    lines = caplog.messages
    assert lines[1] == "[1/4] abs A (eta 90 s)" and lines[2] == "[2/4] abs B (eta 60 s)"
    sink = ListSink()
    list(LanesExecutor("cuda", ["0", "1"]).run(run_pair, pair_tasks(lanes_host, tmp_path / "c", ["abs", "add"]),
                                               Runtime(host=lanes_host, sink=sink)))
    started = [line for line in sink.lines if line.startswith("lane cuda:")]
    assert sorted(line.split(": ", 1)[1].split(" ")[0] for line in started) == ["abs", "add"]


def test_at_80_columns_the_bar_keeps_its_count_and_time_left():
    """The running cells' labels are what gives way (cut with an ellipsis), never the count,
    the bar or the time left."""
    import io

    rich_console = pytest.importorskip("rich.console")
    from zl_core.campaigns import progress as progress_module

    out = io.StringIO()
    screen = rich_console.Console(file=out, force_terminal=True, width=80, no_color=True)
    bar = progress_module.Progress(120, "ab DISABLE_MMA_V3_20261206-083618", bar=True, screen=screen)
    for n, label in enumerate(("mm r03/A", "bmm r02/B", "addmm r04/A", "softmax r01/B")):
        bar.started(n, label)
    bar.advance("mm r02/B rc=0 rows=5 ttgir=8 15.5s", key=0)
    bar.close()
    drawn = [line for line in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).replace("\r", "\n").splitlines()
             if "cells" in line]
    assert drawn and all(len(line) <= 80 for line in drawn)
    assert "1/120 cells" in drawn[-1] and " eta " in drawn[-1] and "running: mm r03/A" not in drawn[-1]


def test_drift_is_judged_against_each_cells_own_device(tmp_path):
    from zl_core.cells.cell import CellOutcome
    from zl_core.decisions.status import append_status, read_status, telemetry_flags
    from zl_core.interface import caliber

    t0 = 1_800_000_000.0
    for op, device in (("mm", "0"), ("bmm", "1")):  # two lanes measuring at the same time
        for round_no in (2, 3):  # a cell is judged against its operator's other rounds
            cell = tmp_path / op / f"r0{round_no}" / "A"
            cell.mkdir(parents=True)
            caliber.write_identity(cell, {"device": device})
            start = t0 + 20 * round_no - 20
            out = CellOutcome(cell_dir=cell, rc=0, timed_out=False, elapsed_s=10, start=start,
                              end=start + 10, markers={}, success_rows=1, failed_rows=0)
            append_status(tmp_path, round_no=round_no, op=op, side="A", switch_value="0",
                          outcome=out)
    assert {r.op: r.device for r in read_status(tmp_path)} == {"mm": "0", "bmm": "1"}
    lines = ["timestamp\tindex\tsm_clock_mhz\tmem_clock_mhz\ttemp_c\tpower_w\tutil_pct"]
    for s in range(60):  # device 1 throttles during round 2, device 0 does not
        for index in "01":
            clock = 900 if index == "1" and 21 <= s <= 29 else 1980
            lines.append(f"{t0 + s:.0f}\t{index}\t{clock}\t3201\t50\t400\t90")
    (tmp_path / "telemetry.tsv").write_text("\n".join(lines) + "\n")
    flags = telemetry_flags(tmp_path, None)
    assert list(flags) == [("bmm", "2", "A")] and flags[("bmm", "2", "A")][0].startswith("sm_clock_low")


def test_two_lanes_per_device_overlap_cells_on_it_under_one_device_lock(lanes_host, tmp_path):
    from zl_core.cells.devicelock import DeviceLock

    names = ["abs", "add", "mul", "sub"]
    executor = LanesExecutor("cuda", ["0"], per_device=2)
    assert executor.concurrency == 2
    sink = ListSink()
    results = list(executor.run(run_pair, pair_tasks(lanes_host, tmp_path / "c", names),
                                Runtime(host=lanes_host, sink=sink)))
    assert sorted(r[0].cell_dir.parent.name for r in results) == sorted(names)
    assert all(o.ok for pair in results for o in pair)
    events = read_ledger(tmp_path / "ledger.tsv")
    assert {e[1] for e in events} == {"0"}
    depth = deepest = 0
    for kind, *_ in events:  # cells running at once on device 0
        depth += 1 if kind == "start" else -1
        deepest = max(deepest, depth)
    assert deepest == 2
    assert {line.split(":")[1].split(" ")[0] for line in sink.lines if line.startswith("lane cuda:")} \
        == {"0/1", "0/2"}
    lock = DeviceLock("cuda", "0")
    assert lock.try_acquire()  # the last lane to leave let the device go
    lock.release()


def test_a_screen_runs_several_cells_per_device_and_says_so_ab_rounds_never(fake_host, tmp_path, capsys):
    import json

    from zl_core.cli import main
    from zl_core.interface import caliber

    root = tmp_path / "runs"
    assert main(["screen", "--ops", "gemm", "pointwise", "--suite", "fake", "--per-device", "2",
                 "--start", "warm", "--runs-root", str(root)]) == 0
    err = capsys.readouterr().err
    assert "lane fakegpu:0/1" in err or "lane fakegpu:0/2" in err
    (campaign,) = root.glob("screen_*")
    for op in ("gemm", "pointwise"):
        ident = caliber.read_identity(campaign / op / "B")
        assert ident["concurrency"] == 2 and ident["start"] == "warm"
    assert json.loads((campaign / "campaign.json").read_text())["options"]["lanes"]["per_device"] == 2
    assert main(["ab", "--rounds", "4", "--suite", "fake", "--per-device", "2",
                 "--runs-root", str(root)]) == 2
    assert "A/B rounds time one cell per device at a time" in capsys.readouterr().err
    assert main(["screen", "--compile-only", "--target", "fake:1", "--suite", "fake", "--ops", "gemm", "--per-device", "2",
                 "--runs-root", str(root)]) == 2
    assert "--per-device shares this host's devices" in capsys.readouterr().err
