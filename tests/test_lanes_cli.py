"""zl screen over the lanes of a fake 4-GPU host: lanes, physical ids, resume after
SIGKILL, signals, retries, exit codes and the report's refusal of unfinished campaigns."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_lanes_processes import LAUNCHER, alive, fake_env, ledger, wait_for

OPS = ["abs", "add", "mul", "sub", "exp", "log", "sin", "cos"]


@pytest.fixture
def zl(lanes_main):
    return lanes_main


def campaigns(tmp_path: Path, kind: str = "screen") -> list[Path]:
    return sorted((tmp_path / "runs").glob(f"{kind}_*"))


def identity(cell: Path) -> dict:
    return json.loads((cell / "run_identity.json").read_text())


def screen_args(*extra: str) -> list[str]:
    return ["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", *extra]


@pytest.mark.slow
def test_a_screen_spreads_operators_over_every_lane(zl, tmp_path, capsys):
    assert zl([*screen_args("--ops", *OPS, "--devices", "all")]) == 0
    [campaign] = campaigns(tmp_path)
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    assert [r["op"] for r in rows] == OPS  # plan order, whatever order they finished in
    status = (campaign / "status.tsv").read_text().splitlines()
    header = status[0].split("\t")
    devices = {line.split("\t")[header.index("device")] for line in status[1:]}
    assert devices == {"0", "1", "2", "3"}
    for op in OPS:  # one operator, one device; concurrency is a caliber field
        a, b = identity(campaign / op / "A"), identity(campaign / op / "B")
        assert a["device"] == b["device"] and a["concurrency"] == b["concurrency"] == 4
        assert a["replay_ms"] == b["replay_ms"] == 10.0  # a screen's timing is a first look
        # The vendor's tool names the physical device (the fake nvidia-smi's UUID scheme).
        assert a["device_uuid"].startswith(f"GPU-{int(a['device']):08d}-fake") and a["host"]
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["state"] == "complete" and meta["devices"] == ["0", "1", "2", "3"]
    assert zl(["report", str(campaign)]) == 0


def test_lanes_under_a_visibility_mask_are_its_physical_devices(zl, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    assert zl([*screen_args("--ops", "abs", "add", "mul", "--devices", "all")]) == 0
    assert {row[1] for row in ledger(tmp_path)} <= {"1", "3"}
    [campaign] = campaigns(tmp_path)
    for op in ("abs", "add", "mul"):
        ident = identity(campaign / op / "A")
        assert ident["device"] in ("1", "3")
        assert ident["device_uuid"].startswith(f"GPU-0000000{ident['device']}-")  # not GPU 0's


def test_a_device_outside_the_mask_is_refused_in_one_line(zl, monkeypatch, capsys):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    assert zl([*screen_args("--ops", "abs", "--devices", "0,1")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "device(s) 0 are hidden by the visibility mask (1, 3)" in err[0]


def test_a_crashing_cell_is_retried_until_the_same_failure_repeats(zl, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "crashy abs")  # zl screens only the operators a suite offers
    assert zl([*screen_args("--ops", "crashy", "abs")]) == 6
    [campaign] = campaigns(tmp_path)
    ident = identity(campaign / "crashy" / "A")
    assert ident["attempts"] == [-signal.SIGSEGV, -signal.SIGSEGV]
    assert (campaign / "crashy" / "A.attempt1" / "run.log").is_file()  # the earlier log is kept
    assert "1 operator(s) failed: crashy" in capsys.readouterr().err
    assert zl(["report", str(campaign), "--fail-on", "failed"]) == 5


def test_a_crash_that_does_not_repeat_costs_one_retry(zl, tmp_path, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "crashonce")
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("ZL_FAKE_CRASH_ONCE", str(marks))
    assert zl([*screen_args("--ops", "crashonce")]) == 0
    [campaign] = campaigns(tmp_path)
    assert identity(campaign / "crashonce" / "A")["attempts"] == [-signal.SIGSEGV, 0]


def test_a_rejected_dtype_filter_is_dropped_and_said(zl, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_OPS", "dtypeop")
    assert zl([*screen_args("--ops", "dtypeop:test_dtypeop.py:float64")]) == 0
    err = capsys.readouterr().err
    assert "rejects dtypes float64; running it again without the dtype filter" in err
    [campaign] = campaigns(tmp_path)
    assert identity(campaign / "dtypeop" / "A")["retry_notes"] == ["dtype_fallback"]


def run_screen_process(tmp_path: Path, *extra: str, sleep: str = "0.6") -> subprocess.Popen:
    env = fake_env(tmp_path, ZL_FAKE_SLEEP=sleep)
    return subprocess.Popen([sys.executable, str(LAUNCHER), *screen_args("--ops", *OPS, *extra)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ended(tmp_path: Path) -> list[tuple[str, str]]:
    return [(row[2], row[3]) for row in ledger(tmp_path) if row[0] == "end"]


def sigkilled_screen(tmp_path: Path, after: int) -> Path:
    """A lanes screen SIGKILLed once ``after`` cells have ended, none of its cells left running."""
    proc = run_screen_process(tmp_path, "--devices", "all")
    assert wait_for(lambda: len(ended(tmp_path)) >= after, timeout=60), proc.communicate(timeout=5)
    proc.kill()
    proc.wait()
    running = [int(r[4]) for r in ledger(tmp_path) if r[0] == "start"]
    assert wait_for(lambda: not any(alive(pid) for pid in running), timeout=5)
    [campaign] = campaigns(tmp_path)
    return campaign


@pytest.mark.slow
def test_resume_after_sigkill_reruns_no_finished_cell_and_misses_none(tmp_path):
    campaign = sigkilled_screen(tmp_path, after=6)
    # Finished for zl: the identity's last stamp was written before the kill.
    kept = {(op, side) for op in OPS for side in "AB"
            if (campaign / op / side / "run_identity.json").is_file()
            and "finished" in identity(campaign / op / side)}
    assert kept
    kept_devices = {cell: identity(campaign / cell[0] / cell[1])["device"] for cell in kept}
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "running"
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.1")
    report = subprocess.run([sys.executable, str(LAUNCHER), "report", str(campaign)], env=env,
                            capture_output=True, text=True, check=False, timeout=60)
    assert report.returncode == 6 and "unfinished" in report.stderr  # a half screen never looks whole
    done = subprocess.run([sys.executable, str(LAUNCHER), "screen", "--resume", str(campaign),
                           "--devices", "0,1"], env=env, capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    for op in OPS:
        for side in "AB":
            assert "finished" in identity(campaign / op / side)  # none missing
        # An operator's cells share one card, even when the resume's lanes left out the
        # device its kept cell ran on.
        assert identity(campaign / op / "A")["device"] == identity(campaign / op / "B")["device"]
    starts = [(row[2], row[3]) for row in ledger(tmp_path) if row[0] == "start"]
    # No finished cell ran again, unless it was the only half of an operator on a device
    # this resume left out: then the operator ran again whole and the kept cell was set aside.
    moved = {op for op, side in kept if (op, "AB".replace(side, "")) not in kept
             and kept_devices[(op, side)] not in ("0", "1")}
    assert all(starts.count(cell) == 1 for cell in kept if cell[0] not in moved)
    for op in moved:
        assert list((campaign / ".aside").glob(f"*-moved/{op}/*/run_identity.json"))
        assert f"{op}: its finished cells ran on device" in done.stderr
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    assert [r["op"] for r in rows] == OPS
    assert list((campaign / ".aside").rglob("run.log"))  # the half-written cells, kept


@pytest.mark.slow
def test_a_cell_killed_before_its_first_identity_is_set_aside_and_rerun(tmp_path):
    # SIGKILL between the write of a cell's first identity and its rename leaves the cell
    # folder holding only that write's sibling: a resume sets it aside like any
    # half-written cell instead of refusing the folder as taken.
    import shutil

    campaign = sigkilled_screen(tmp_path, after=2)

    def unfinished(cell: Path) -> bool:
        return not (cell / "run_identity.json").is_file() or "finished" not in identity(cell)

    op = next(op for op in reversed(OPS) if unfinished(campaign / op / "A"))
    shutil.rmtree(campaign / op / "A", ignore_errors=True)
    (campaign / op / "A").mkdir(parents=True)
    (campaign / op / "A" / ".run_identity.json.4242.tmp").write_text('{"op": "' + op + '"')
    done = subprocess.run([sys.executable, str(LAUNCHER), "screen", "--resume", str(campaign), "--devices",
                           "all"], env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.1"), capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "finished" in identity(campaign / op / "A")
    assert list((campaign / ".aside").glob(f"*/{op}/A/.run_identity.json.4242.tmp"))
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"


def test_resume_refuses_different_arguments_naming_them(zl, tmp_path, capsys):
    proc = run_screen_process(tmp_path, "--devices", "all")
    assert wait_for(lambda: len(ended(tmp_path)) >= 2, timeout=60)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    [campaign] = campaigns(tmp_path)
    capsys.readouterr()
    assert zl(["screen", "--resume", str(campaign), "--timeout", "99"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--timeout 99.0 (campaign: 1200.0)" in err[0]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_a_lanes_screen_marks_it_interrupted_and_leaves_no_cell(tmp_path, sig, code):
    proc = run_screen_process(tmp_path, "--devices", "all", "-q", sleep="5")  # -q: no progress lines
    started = wait_for(lambda: [r for r in ledger(tmp_path) if r[0] == "start"] if len(
        [r for r in ledger(tmp_path) if r[0] == "start"]) >= 4 else None, timeout=60)
    assert started, proc.communicate(timeout=5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signal.Signals(sig).name}" in lines[0]
    assert "--resume" in lines[0]
    assert wait_for(lambda: not any(alive(int(r[4])) for r in started), timeout=5)
    [campaign] = campaigns(tmp_path)
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "interrupted"


def test_ab_does_not_take_an_incomplete_screen_silently(zl, tmp_path, capsys):
    assert zl([*screen_args("--ops", "abs")]) == 0
    proc = run_screen_process(tmp_path, sleep="5")
    first = len(ledger(tmp_path))  # the complete screen's cells
    assert wait_for(lambda: len(ledger(tmp_path)) > first, timeout=60)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    interrupted = campaigns(tmp_path)[-1]
    capsys.readouterr()
    zl(["ab", "--suite", "sleepy", "--rounds", "4", "--aa", "--telemetry-interval", "0"])
    err = capsys.readouterr().err
    assert f"not taking screen {interrupted}: it is interrupted" in err


def test_scheduler_without_dask_says_how_to_install_it(zl, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert zl([*screen_args("--ops", "abs", "--scheduler", "tcp://127.0.0.1:1")]) == 2
    assert "pip install 'zl-core[dask]'" in capsys.readouterr().err



def test_dismissed_and_skip_marked_operators_are_listed_as_skipped_with_their_reason(zl, tmp_path, capsys):
    dismiss = tmp_path / "dismiss.txt"
    dismiss.write_text("# never run these\nadd   needs two GPUs\n")
    assert zl([*screen_args("--ops", "abs", "add", "retired", "--dismiss", str(dismiss))]) == 0
    [campaign] = campaigns(tmp_path)
    rows = {r["op"]: r for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    assert list(rows) == ["abs", "add", "retired"]
    assert rows["add"]["verdict"] == rows["retired"]["verdict"] == "SKIPPED"
    assert rows["add"]["notes"] == "dismissed: needs two GPUs"
    assert rows["retired"]["notes"] == "benchmark skip mark: retired upstream"
    assert {row[2] for row in ledger(tmp_path)} == {"abs"}  # only abs ran
    assert "2 operator(s) SKIPPED, not run" in capsys.readouterr().err
    assert zl(["report", str(campaign)]) == 0


def test_a_dismissed_operator_needs_a_reason(zl, tmp_path, capsys):
    dismiss = tmp_path / "dismiss.txt"
    dismiss.write_text("add\n")
    assert zl([*screen_args("--ops", "abs", "add", "--dismiss", str(dismiss))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 1: 'add' has no reason" in err[0]
    assert not campaigns(tmp_path)  # nothing written


def test_skip_marks_are_read_from_flaggems_benchmark_files(tmp_path):
    from zl_flaggems.host.provider import FlagGemsProvider

    bench = tmp_path / "benchmark"
    bench.mkdir()
    (bench / "test_unary.py").write_text(
        'import pytest\n\n@pytest.mark.skip(reason="needs a second GPU")\ndef test_abs():\n    pass\n\n'
        '@pytest.mark.skipif(True, reason="cond")\ndef test_neg():\n    pass\n\n'
        '@pytest.mark.parametrize("x", [1,\n    2])\n@pytest.mark.skip\ndef test_exp(x):\n    pass\n')
    ops = {o.op: o.skip for o in FlagGemsProvider().list_ops(str(tmp_path))}
    assert ops == {"abs": "needs a second GPU", "neg": "",
                   "exp": "skipped unconditionally by the benchmark"}


def test_a_screen_without_ops_takes_the_suites_whole_inventory(zl, tmp_path):
    assert zl([*screen_args("--devices", "all")]) == 0
    [campaign] = campaigns(tmp_path)
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    assert [r["op"] for r in rows] == [*OPS, "retired"]
    assert [r["verdict"] for r in rows].count("SKIPPED") == 1  # the skip-marked one, listed


@pytest.mark.slow
def test_ab_rounds_on_lanes_record_their_concurrency_and_a_report_refuses_mixing_it(zl, tmp_path, capsys):
    assert zl(["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "add",
               "--rounds", "4", "--allow-no-ir-diff", "--devices", "0,1",
               "--telemetry-interval", "0.2"]) == 0
    [campaign] = campaigns(tmp_path, "ab")
    for op in ("abs", "add"):
        idents = [identity(campaign / op / f"r0{r}" / s) for r in (1, 2, 3, 4) for s in "AB"]
        assert {i["replay_ms"] for i in idents} == {30.0}  # A/B rounds: the full default budget
        assert {i["concurrency"] for i in idents} == {2} and len({i["device"] for i in idents}) == 1
    assert zl([*screen_args("--ops", "abs", "--device", "0")]) == 0
    [screen] = campaigns(tmp_path)
    capsys.readouterr()
    assert zl(["report", "--ab", str(screen / "abs" / "A"), str(campaign / "abs" / "r01" / "B")]) == 4
    assert "'concurrency' differs" in capsys.readouterr().err


@pytest.mark.slow
def test_an_interrupted_ab_campaign_resumes_to_completion(tmp_path):
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.5")
    argv = [sys.executable, str(LAUNCHER), "ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops",
            "abs", "add", "--rounds", "4", "--allow-no-ir-diff", "--devices", "all",
            "--telemetry-interval", "0"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: len(ended(tmp_path)) >= 4, timeout=60), proc.communicate(timeout=5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 143
    [campaign] = campaigns(tmp_path, "ab")
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "interrupted"
    done = subprocess.run([sys.executable, str(LAUNCHER), "ab", "--resume", str(campaign)], env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    for op in ("abs", "add"):
        for r in (1, 2, 3, 4):
            for side in "AB":
                assert "finished" in identity(campaign / op / f"r0{r}" / side)


@pytest.mark.slow
def test_a_campaign_that_recorded_no_round_order_resumes_and_is_judged_alternating(zl, tmp_path, capsys):
    import shutil

    argv = ["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "--rounds", "4",
            "--allow-no-ir-diff", "--telemetry-interval", "0"]
    assert zl(argv) == 0
    [campaign] = campaigns(tmp_path, "ab")
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["round_order"] == "counterbalanced"
    del meta["round_order"]  # as zl wrote it when every campaign alternated
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    for r in (3, 4):
        shutil.rmtree(campaign / "abs" / f"r0{r}")
    status = campaign / "status.tsv"
    status.write_text("\n".join(status.read_text().splitlines()[:5]) + "\n")  # header + rounds 1-2
    assert zl(["ab", "--resume", str(campaign)]) == 0
    rows = [line.split("\t") for line in status.read_text().splitlines()]
    cells = [row[rows[0].index("cell")] for row in rows[1:]]
    # rounds 3 and 4 keep the order rounds 1 and 2 ran in: A first in odd rounds
    assert cells[4:] == ["abs/r03/A", "abs/r03/B", "abs/r04/B", "abs/r04/A"]
    report = json.loads((campaign / "report.json").read_text())
    assert report["summary"]["plan"]["round_order"] == "alternating"
    meta = json.loads((campaign / "campaign.json").read_text())
    meta["round_order"] = "ABBA"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert zl(["report", str(campaign)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "round_order 'ABBA'" in err[0]



def test_resume_restores_the_status_row_of_a_cell_finished_just_before_the_kill(zl, tmp_path):
    assert zl([*screen_args("--ops", "abs", "add")]) == 0
    [campaign] = campaigns(tmp_path)
    status = campaign / "status.tsv"
    lines = status.read_text().splitlines()
    status.write_text("\n".join(lines[:-1]) + "\n")  # killed after the identity, before the row
    meta = json.loads((campaign / "campaign.json").read_text())
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    before = len(ledger(tmp_path))
    assert zl(["screen", "--resume", str(campaign)]) == 0
    assert len(ledger(tmp_path)) == before  # no cell ran again
    now = status.read_text().splitlines()
    cells = [line.split("\t")[15] for line in now[1:]]
    assert len(now) == len(lines) and sorted(cells) == ["abs/A", "abs/B", "add/A", "add/B"]  # back, once


def test_a_resume_whose_lanes_leave_out_a_kept_device_reruns_that_operator_whole(zl, tmp_path, capsys):
    assert zl([*screen_args("--ops", "abs", "add", "--devices", "2,3")]) == 0
    [campaign] = campaigns(tmp_path)
    moved = next(op for op in ("abs", "add") if identity(campaign / op / "A")["device"] == "3")
    import shutil

    shutil.rmtree(campaign / moved / "B")  # killed before its B cell ran
    meta = json.loads((campaign / "campaign.json").read_text())
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    starts_before = len([r for r in ledger(tmp_path) if r[0] == "start"])
    capsys.readouterr()
    assert zl(["screen", "--resume", str(campaign), "--devices", "0,2"]) == 0
    err = capsys.readouterr().err
    assert f"{moved}: its finished cells ran on device 3 of " in err
    a, b = identity(campaign / moved / "A"), identity(campaign / moved / "B")
    assert a["device"] == b["device"] in ("0", "2")  # whole, on one of this resume's lanes
    [aside] = (campaign / ".aside").glob(f"*-moved/{moved}/A/run_identity.json")
    assert json.loads(aside.read_text())["device"] == "3"  # kept for diagnosis, not lost
    new_starts = [r for r in ledger(tmp_path) if r[0] == "start"][starts_before:]
    assert sorted((r[2], r[3]) for r in new_starts) == [(moved, "A"), (moved, "B")]  # the other stays
    assert zl(["report", str(campaign)]) == 0  # one device per operator: no caliber refusal


def test_a_campaign_from_before_the_replay_budget_is_not_resumed(zl, tmp_path, capsys):
    assert zl([*screen_args("--ops", "abs")]) == 0
    [campaign] = campaigns(tmp_path)
    meta = json.loads((campaign / "campaign.json").read_text())
    del meta["options"]["measure"]["replay_ms"]  # as zl wrote it before --replay-ms
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert zl(["screen", "--resume", str(campaign)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "before the graph replay budget existed" in err[0]


@pytest.mark.slow
def test_a_campaign_from_before_warm_starts_resumes_cold(zl, tmp_path, capsys):
    import shutil

    argv = ["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "--rounds", "4",
            "--allow-no-ir-diff", "--telemetry-interval", "0"]
    assert zl(argv) == 0
    [campaign] = campaigns(tmp_path, "ab")
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["start"] == "warm" and meta["options"]["measure"]["start"] == "warm"
    for key in ("start",):  # as zl wrote them when every cell started cold
        del meta[key]
        del meta["options"]["measure"][key]
    meta["state"] = "interrupted"
    (campaign / "campaign.json").write_text(json.dumps(meta))
    for cell in campaign.glob("abs/r0[12]/[AB]"):
        ident = json.loads((cell / "run_identity.json").read_text())
        del ident["start"]
        (cell / "run_identity.json").write_text(json.dumps(ident))
    for r in (3, 4):
        shutil.rmtree(campaign / "abs" / f"r0{r}")
    status = campaign / "status.tsv"
    status.write_text("\n".join(status.read_text().splitlines()[:5]) + "\n")
    assert zl(["ab", "--resume", str(campaign)]) == 0  # not refused: --start was never given
    assert {identity(c)["start"] for c in campaign.glob("abs/r0[34]/[AB]")} == {"cold"}
    capsys.readouterr()
    assert zl(["report", str(campaign)]) == 0  # every cell cold: nothing mixed


@pytest.mark.slow
def test_a_sweep_sharded_over_four_devices_then_measured_alone_on_one(zl, tmp_path, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_SLEEP", "1.5")  # longer than four cells take to start here
    assert zl([*screen_args("--ops", "abs", "--device", "2", "--sweep-devices", "all")]) == 0
    [campaign] = campaigns(tmp_path)
    rows = ledger(tmp_path)
    shards = [r for r in rows if r[3].startswith("shard")]
    assert sorted((r[1], r[3]) for r in shards if r[0] == "start") == [
        ("0", "shard0"), ("1", "shard1"), ("2", "shard2"), ("3", "shard3")]
    # The shards overlap (four devices at once); the measuring cell starts after the last ends.
    starts = [float(r[5]) for r in shards if r[0] == "start"]
    ends = [float(r[5]) for r in shards if r[0] == "end"]
    assert max(starts) < min(ends)
    (a_start,) = [float(r[5]) for r in rows if r[0] == "start" and r[3] == "A"]
    assert a_start > max(ends) and [r[1] for r in rows if r[3] == "A"] == ["2", "2"]
    a = identity(campaign / "abs" / "A")
    assert a["sweep"]["mode"] == "sharded" and a["sweep"]["devices"] == ["0", "1", "2", "3"]
    assert a["autotune_mode"] == "record" and a["device"] == "2"
    assert zl(["report", str(campaign)]) == 0


def test_sweep_devices_are_refused_beside_lanes_and_must_exist(zl, capsys):
    assert zl([*screen_args("--ops", "abs", "--devices", "all", "--sweep-devices", "all")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--sweep-devices lends this host's devices" in err[0]
    assert zl([*screen_args("--ops", "abs", "--sweep-devices", "0,7")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "7" in err[0]
    assert zl([*screen_args("--ops", "abs", "--sweep-devices", "1")]) == 2
    assert "needs two devices or more" in capsys.readouterr().err


@pytest.mark.slow
def test_ab_takes_the_screens_suite(zl, tmp_path, capsys):
    """Without --suite, zl ab times the screen's operators with the suite that screened them
    (a plugin suite here), not the built-in one, whose cells would all fail."""
    assert zl([*screen_args("--ops", "abs")]) == 0
    assert zl(["ab", "--rounds", "4", "--aa", "--controls", "1", "--telemetry-interval", "0"]) == 0
    [campaign] = campaigns(tmp_path, "aa")
    assert json.loads((campaign / "campaign.json").read_text())["suite"] == "sleepy"
    cells = [line.split("\t") for line in (campaign / "status.tsv").read_text().splitlines()[1:]]
    assert len(cells) == 8 and {row[5] for row in cells} == {"0"}  # 4 rounds x 2 sides, every rc 0


def test_ab_refuses_a_screen_whose_suite_is_gone(zl, tmp_path, capsys):
    assert zl([*screen_args("--ops", "abs")]) == 0
    [screen] = campaigns(tmp_path)
    meta = json.loads((screen / "campaign.json").read_text())
    meta["suite"] = "uninstalled"
    (screen / "campaign.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert zl(["ab", "--rounds", "4", "--aa", "--controls", "1", "--telemetry-interval", "0"]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert err[-1].startswith("zl ab: the screen's operators come from suite 'uninstalled', which is "
                              "not installed here (installed: ")
    assert campaigns(tmp_path, "aa") == []
