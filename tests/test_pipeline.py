"""A/B lanes in a pipeline (``zl ab --pipeline N``): a lane's next cells start while one
times, and timing stays one cell at a time per device, whatever fails. Checked from the
timing gate's own record in every cell (zl_core.interface.timing_gate), on the fake
four-GPU host with real cell processes (tests/fake_lanes)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from zl_core.cells import devicelock
from zl_core.interface import caliber, phases, timing_gate

# real campaigns of real cell processes, tens of seconds each
pytestmark = pytest.mark.slow

OPS = ["abs", "add", "mul", "sub", "exp", "log"]


def campaigns(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "runs").glob("ab_*"))


def cells(campaign: Path) -> list[Path]:
    return sorted(p.parent for p in campaign.glob("*/r*/*/run_identity.json"))


def gate_of(cell: Path) -> dict | None:
    return (caliber.read_identity(cell) or {}).get(phases.KEY, {}).get(timing_gate.KEY)


def holds(cell: Path) -> list[tuple[float, float]]:
    gate = gate_of(cell)
    return [] if gate is None else [tuple(h) for h in gate["held"]]


def overlapping(spans: list[tuple[str, float, float]]) -> list[tuple[str, str]]:
    """Pairs of different cells whose spans overlap (the gate's record is its truth: a cell
    took it at the start of its span and said it held it at the end)."""
    spans = sorted(spans, key=lambda s: s[1])
    found = []
    for i, (who, _start, end) in enumerate(spans):
        for other, start2, _end2 in spans[i + 1:]:
            if start2 >= end:
                break
            if other != who:
                found.append((who, other))
    return found


def ab(zl, *extra: str) -> int:
    return zl(["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--rounds", "4",
               "--allow-no-ir-diff", "--telemetry-interval", "0", *extra])


def test_a_pipelined_lane_never_times_two_cells_at_once_and_overlaps_their_setup(lanes_main, tmp_path):
    assert ab(lanes_main, "--ops", *OPS, "--devices", "0,1", "--pipeline", "3") == 0
    [campaign] = campaigns(tmp_path)
    by_device: dict[str, list] = {}
    windows: dict[str, list] = {}
    waited = 0.0
    for cell in cells(campaign):
        ident = caliber.read_identity(cell)
        assert ident["pipeline"] == 3 and ident["concurrency"] == 2  # two devices time at once
        record = ident[phases.KEY]
        gate = record[timing_gate.KEY]
        assert len(gate["held"]) == 1 and not gate["open"]
        # Held until the process exited, which the orchestrator saw after the cell's last word.
        (taken, given), = gate["held"]
        assert gate["until_exit"] and gate["exit_seen"] >= given
        waited += gate["waited_s"]
        # Every stretch the cell timed lies inside its hold of the gate.
        for start, end in record["device_busy"]["intervals"]:
            assert taken - 1e-3 <= start < end <= given
        by_device.setdefault(ident["device"], []).append((str(cell), taken, given))
        windows.setdefault(ident["device"], []).append((str(cell), *record["device_busy"]["window"]))
    assert set(by_device) == {"0", "1"}
    for device, spans in by_device.items():
        assert overlapping(spans) == [], f"two cells held device {device}'s gate at once"
        # The pipeline is real: cells lived (started, imported) while another held the gate.
        assert overlapping(windows[device] + spans), device
    assert waited > 0  # some cell was ready before the gate was free
    # The report says what the waits were, apart from the cells' work.
    spent = json.loads((campaign / "report.json").read_text())["summary"]["time_spent"]
    assert spent["pipeline"]["cells_gated"] == len(cells(campaign))
    assert spent["pipeline"]["gate_wait_s"] == pytest.approx(waited, abs=0.01)
    from zl_core.report import build
    from zl_report import render

    for fmt in ("text", "md", "html"):
        shown = " ".join(render(build(campaign), fmt).split())
        assert f"{len(cells(campaign))} cell(s) ran in a pipeline and waited" in shown, fmt


def test_a_cell_released_after_its_tests_tears_down_beside_the_next_timing(lanes_main, tmp_path,
                                                                          monkeypatch):
    # --gate-release tests: each cell gives the gate back once its last test ended; its
    # teardown (here 0.6 s after its last record) runs beside the next cell's hold.
    monkeypatch.setenv("ZL_FAKE_TEARDOWN_S", "0.6")
    assert ab(lanes_main, "--ops", "abs", "add", "mul", "--pipeline", "3", "--gate-release", "tests") == 0
    [campaign] = campaigns(tmp_path)
    spans, lives = [], []
    for cell in cells(campaign):
        ident = caliber.read_identity(cell)
        assert ident["pipeline"] == 3 and ident["gate_release"] == "tests"
        record = ident[phases.KEY]
        gate = record[timing_gate.KEY]
        (taken, given), = gate["held"]
        assert not gate["until_exit"] and gate["exit_seen"] is None  # given back, by its own word
        for start, end in record["device_busy"]["intervals"]:  # its timing inside its hold
            assert taken - 1e-3 <= start < end <= given
        exited = record["device_busy"]["window"][1]
        assert exited >= given + 0.5  # the teardown came after the hold
        spans.append((str(cell), taken, given))
        lives.append((str(cell), given, exited))
    assert overlapping(spans) == [], "two cells held the gate at once"
    # The point of it: some cell's teardown ran while another cell held the gate.
    assert any(who != other for who, other in overlapping(lives + spans))


def test_gate_release_needs_a_pipeline_and_a_report_refuses_to_mix_them(lanes_main, tmp_path, capsys):
    assert ab(lanes_main, "--ops", "abs", "--gate-release", "tests") == 2
    err = capsys.readouterr().err
    assert "give --pipeline 2 or more" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not campaigns(tmp_path)
    assert ab(lanes_main, "--ops", "abs", "--pipeline", "2") == 0
    assert ab(lanes_main, "--ops", "abs", "--pipeline", "2", "--gate-release", "tests") == 0
    first, second = campaigns(tmp_path)
    assert {caliber.read_identity(c)["gate_release"] for c in cells(first)} == {"exit"}
    capsys.readouterr()
    assert lanes_main(["report", "--ab", str(first / "abs" / "r01" / "A"),
                       str(second / "abs" / "r01" / "B")]) == 4
    assert "'gate_release' differs" in capsys.readouterr().err


def test_an_operators_next_cell_sets_up_while_its_previous_one_times_in_order(lanes_main, tmp_path,
                                                                           monkeypatch):
    # One operator: before, its cells ran one after another whatever the pipeline.
    monkeypatch.setenv("ZL_FAKE_SLEEP", "0.6")  # time enough for the lane to see each hold begin
    assert ab(lanes_main, "--ops", "abs", "--pipeline", "2") == 0
    [campaign] = campaigns(tmp_path)
    spans, windows = [], {}
    for cell in cells(campaign):
        record = caliber.read_identity(cell)[phases.KEY]
        (taken, given), = record[timing_gate.KEY]["held"]
        spans.append((f"{cell.parent.name}/{cell.name}", taken, given))
        windows[f"{cell.parent.name}/{cell.name}"] = record["device_busy"]["window"]
    assert overlapping(spans) == []
    # They held the gate in the planned order: round by round, each round's sides in the
    # counterbalanced order (A B, B A, B A, A B).
    timed = [who for who, *_ in sorted(spans, key=lambda s: s[1])]
    assert timed == ["r01/A", "r01/B", "r02/B", "r02/A", "r03/B", "r03/A", "r04/A", "r04/B"]
    # From round 2 on, each cell started before the one before it ended.
    early = [b for a, b in itertools.pairwise(timed)
             if b >= "r02" and windows[b][0] < windows[a][1]]
    assert len(early) >= 4, (early, windows)
    rows = [line.split("\t") for line in (campaign / "status.tsv").read_text().splitlines()[1:]]
    assert len(rows) == 8 and not list(campaign.rglob(".zl_turns"))


def test_a_cell_started_early_for_an_operator_that_stops_leaves_nothing(lanes_main, tmp_path, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "failr2op")
    monkeypatch.setenv("ZL_FAKE_SLEEP", "0.6")
    ledger = tmp_path / "ledger.tsv"
    monkeypatch.setenv("ZL_FAKE_LEDGER", str(ledger))
    assert ab(lanes_main, "--ops", "failr2op", "--pipeline", "2") == 6  # a campaign whose cells failed
    [campaign] = campaigns(tmp_path)
    started = [line.split("\t") for line in ledger.read_text().splitlines() if line.startswith("start")]
    assert len(started) == 5  # the four cells of rounds 1-2, and round 3's first, started early
    rounds = sorted(p.name for p in (campaign / "failr2op").glob("r*"))
    assert rounds == ["r01", "r02"]  # round 3's first cell started early, then was told to stop
    rows = (campaign / "status.tsv").read_text().splitlines()[1:]
    assert len(rows) == 4 and not list(campaign.rglob(".zl_turns"))


def test_a_cell_that_dies_before_timing_never_held_the_gate(lanes_main, tmp_path, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "crashy abs add")
    # crash* dies (SIGSEGV) right after it starts: the campaign fails, and never waits on it.
    assert ab(lanes_main, "--ops", "crashy", "abs", "add", "--pipeline", "2") != 0
    [campaign] = campaigns(tmp_path)
    crashed = [c for c in cells(campaign) if c.parts[-3] == "crashy"]
    assert crashed and all(holds(c) == [] for c in crashed)
    for op in ("abs", "add"):
        assert all("finished" in caliber.read_identity(c) for c in cells(campaign) if c.parts[-3] == op)


def test_a_cell_stuck_while_timing_is_ended_and_the_gate_opens_for_the_next(lanes_main, tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "stuckop abs")
    assert ab(lanes_main, "--ops", "stuckop", "abs", "--pipeline", "2", "--timeout", "4") != 0
    [campaign] = campaigns(tmp_path)
    stuck = campaign / "stuckop" / "r01" / "A"
    ident = caliber.read_identity(stuck)
    assert ident["timed_out"]
    (taken, said), = holds(stuck)
    assert said >= taken
    # It said it held the gate as it got stuck; it held it until its group was killed.
    assert gate_of(stuck)["until_exit"] and gate_of(stuck)["exit_seen"] >= taken + 3.0
    spans = [(str(c), *h) for c in cells(campaign) for h in holds(c)]
    assert overlapping(spans) == []
    # No cell took the gate before the stuck one was killed.
    assert all(start >= gate_of(stuck)["exit_seen"] - 1.0 for c in cells(campaign) if c != stuck
               for start, _ in holds(c) if start > taken)
    abs_cells = [c for c in cells(campaign) if c.parts[-3] == "abs"]
    assert len(abs_cells) == 8 and all("finished" in caliber.read_identity(c) for c in abs_cells)


def test_a_report_refuses_to_compare_cells_of_two_pipeline_depths(lanes_main, tmp_path, capsys):
    assert ab(lanes_main, "--ops", "abs", "--pipeline", "2") == 0
    assert ab(lanes_main, "--ops", "abs") == 0
    first, second = campaigns(tmp_path)
    assert json.loads((second / "report.json").read_text())["summary"]["time_spent"]["pipeline"] is None
    depths = {caliber.read_identity(c)["pipeline"] for c in cells(first)}
    assert depths == {2} and {caliber.read_identity(c)["pipeline"] for c in cells(second)} == {1}
    capsys.readouterr()
    assert lanes_main(["report", "--ab", str(first / "abs" / "r01" / "A"),
                       str(second / "abs" / "r01" / "B")]) == 4
    assert "'pipeline' differs" in capsys.readouterr().err


def test_a_resume_keeps_the_depth_its_cells_ran_at(lanes_main, tmp_path, capsys):
    assert ab(lanes_main, "--ops", "abs", "--pipeline", "2") == 0
    [campaign] = campaigns(tmp_path)
    meta = json.loads((campaign / "campaign.json").read_text())
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert lanes_main(["ab", "--resume", str(campaign), "--pipeline", "3"]) == 2
    err = capsys.readouterr().err
    assert "--pipeline 2" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, said", [
    (["ab", "--suite", "sleepy", "--ops", "abs", "--pipeline", "0"], "expected a number >= 1"),
    (["ab", "--suite", "sleepy", "--ops", "abs", "--pipeline", "9"], "at most 8"),
    (["ab", "--suite", "sleepy", "--ops", "abs", "--pipeline", "2", "--scheduler",
      "tcp://127.0.0.1:9"], "takes no --scheduler"),
    (["screen", "--suite", "sleepy", "--ops", "abs", "--pipeline", "2"], "unrecognized arguments"),
])
def test_bad_pipelines_are_refused_in_one_line(lanes_main, capsys, argv, said):
    try:
        code = lanes_main(argv)
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2


def test_an_accuracy_cell_of_a_pipeline_runs_whole_inside_the_gate(lanes_host, tmp_path):
    from zl_core.cells.cell import run_cell
    from zl_core.interface.opspec import OpSpec
    from zl_core.interface.provider import CellRequest, CheckSpec

    backend = lanes_host.get_backend("cuda")
    request = CellRequest(op=OpSpec(op="abs", op_file="test_abs.py"), backend=backend, out_dir=tmp_path / "check" / "A",
                          python=sys.executable, device="2", side="A", pipeline=2,
                          check=CheckSpec(file="checks/test_abs.py"))
    gate = timing_gate.TimingGate(str(devicelock.gate_path("cuda", "2")))
    gate.enter()  # another cell of the lane is timing
    done = threading.Event()
    thread = threading.Thread(target=lambda: (run_cell(lanes_host, lanes_host.get_provider("sleepy"),
                                                       request), done.set()), daemon=True)
    thread.start()
    time.sleep(1.5)
    assert not done.is_set() and not (tmp_path / "check" / "A" / "accuracy.xml").exists()
    gate.leave()
    thread.join(timeout=30)
    assert done.is_set()
    (taken, given), = holds(tmp_path / "check" / "A")
    assert taken >= gate.held[0][1] - 1e-3 and given > taken
    assert (tmp_path / "check" / "A" / "accuracy.xml").is_file()


def test_the_gate_lets_one_process_in_at_a_time_and_opens_when_its_holder_dies(tmp_path):
    path = tmp_path / "cuda-0.timing"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom zl_core.interface.timing_gate import TimingGate\n"
        f"g = TimingGate({str(path)!r}); g.enter(); print('in', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "in"
        mine = timing_gate.TimingGate(str(path))
        waiter = threading.Thread(target=mine.enter, daemon=True)
        waiter.start()
        time.sleep(0.5)
        assert not mine.holding
        holder.kill()  # killed while it held the gate: the kernel opens it
        waiter.join(timeout=10)
        assert mine.holding and mine.waited_s >= 0.4
        record = mine.record()
        assert record["open"] and len(record["held"]) == 1
        mine.leave()
        assert not mine.record()["open"]
        kept = timing_gate.closed({**record}, exited=record["held"][0][1] + 5)
        assert kept["held"] == record["held"] and kept["until_exit"]  # the cell's own words kept
        assert kept["exit_seen"] == pytest.approx(record["held"][0][1] + 5, abs=1e-3)
    finally:
        holder.kill()
        holder.wait()
    assert os.environ.get(timing_gate.ENV) is None  # the test process itself is no pipelined cell
