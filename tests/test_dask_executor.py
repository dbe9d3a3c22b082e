"""The Dask executor against a real scheduler and two ``zl worker`` processes on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("distributed")

from dask_cluster import FAKES, cluster

sys.path.insert(0, str(FAKES))
from test_lanes_executor import ListSink, pair_tasks
from zl_core.campaigns.dask_executor import TASKS_TSV, DaskExecutor
from zl_fake_lanes import Runtime, run_pair

# Each test starts a real scheduler and workers: tens of seconds.
pytestmark = pytest.mark.slow


def test_two_workers_run_every_task_and_the_cell_folders_come_back(lanes_host, tmp_path):
    names = ["abs", "add", "mul", "sub", "exp", "log"]
    campaign = tmp_path / "runs" / "screen_x"
    campaign.mkdir(parents=True)
    locks = [tmp_path / "host0-locks", tmp_path / "host1-locks"]
    with cluster(tmp_path, ["0,1", "0,1"], lock_dirs=locks) as (address, _workers):
        executor = DaskExecutor(address, campaign_root=campaign)
        sink = ListSink()
        try:
            results = list(executor.run(run_pair, pair_tasks(lanes_host, campaign, names),
                                        Runtime(host=lanes_host, sink=sink)))
        finally:
            executor.close()
    assert sorted(pair[0].cell_dir.parent.name for pair in results) == sorted(names)
    for name in names:
        for side in "AB":
            cell = campaign / name / side
            identity = json.loads((cell / "run_identity.json").read_text())
            assert identity["finished"] and identity["rc"] == 0
            assert (cell / "results.json").is_file() and (cell / "run.log").is_file()
            assert identity["device"] in ("0", "1") and identity["host"]
        # The result's paths name the campaign folder here, not the worker's scratch copy.
        assert all(str(o.cell_dir).startswith(str(campaign)) for o in results[0])
    attempts = (campaign / TASKS_TSV).read_text().splitlines()
    assert len(attempts) == 1 + len(names)  # one start per task, no retries
    assert len({line.split("\t")[3] for line in attempts[1:]}) == 2  # both workers took tasks
    assert len(sink.lines) == 2 * len(names)  # every cell's report replayed here


def test_zl_screen_with_a_scheduler_brings_every_cell_folder_home(tmp_path):
    from test_lanes_processes import LAUNCHER, fake_env

    names = ["abs", "add", "mul", "sub"]
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.2", ZL_LOCK_DIR=str(tmp_path / "client-locks"))
    with cluster(tmp_path, ["0,1", "2,3"]) as (address, _workers):
        proc = subprocess.run([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                               "FAKE_SWITCH", "--ops", *names, "--scheduler", address], env=env,
                              capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [campaign] = (tmp_path / "runs").glob("screen_*")
    rows = json.loads((campaign / "screen.json").read_text())["ops"]
    assert [r["op"] for r in rows] == names
    devices = set()
    for name in names:
        for side in "AB":
            ident = json.loads((campaign / name / side / "run_identity.json").read_text())
            assert ident["finished"] and (campaign / name / side / "results.json").is_file()
            devices.add(ident["device"])
        assert json.loads((campaign / name / "A" / "run_identity.json").read_text())["concurrency"] == 4
    assert devices <= {"0", "1", "2", "3"}
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    assert len((campaign / "status.tsv").read_text().splitlines()) == 1 + 2 * len(names)


def test_a_task_whose_worker_died_is_rerun_elsewhere_and_the_retry_recorded(tmp_path):
    import signal

    from test_lanes_processes import LAUNCHER, fake_env, ledger, wait_for

    names = ["abs", "add"]
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="3", ZL_LOCK_DIR=str(tmp_path / "client-locks"))
    locks = [tmp_path / "host0-locks", tmp_path / "host1-locks"]
    with cluster(tmp_path, ["0", "1"], lock_dirs=locks) as (address, workers):
        proc = subprocess.Popen([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                                 "FAKE_SWITCH", "--ops", *names, "--scheduler", address], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Both workers busy with their first cell, then one host dies.
        assert wait_for(lambda: len({r[1] for r in ledger(tmp_path) if r[0] == "start"}) == 2, timeout=90)
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait()
        out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, out + err
    [campaign] = (tmp_path / "runs").glob("screen_*")
    attempts = [line.split("\t") for line in (campaign / "dask_tasks.tsv").read_text().splitlines()[1:]]
    retried = [a for a in attempts if a[1] == "2"]
    assert len(retried) == 1  # the task of the dead worker ran again, on the other one
    op = retried[0][0]
    assert len({a[3] for a in attempts if a[0] == op}) == 2  # first on the dead worker, then the other
    assert "rerun from scratch after its worker died" in err  # progress: stderr
    for name in names:
        for side in "AB":
            assert json.loads((campaign / name / side / "run_identity.json").read_text())["finished"]


def test_a_screen_resumed_over_dask_reruns_only_its_unfinished_cell(tmp_path):
    from test_lanes_processes import LAUNCHER, fake_env, ledger

    names = ["abs", "add"]
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.2", ZL_LOCK_DIR=str(tmp_path / "client-locks"))
    with cluster(tmp_path, ["0,1"]) as (address, _workers):
        first = subprocess.run([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                                "FAKE_SWITCH", "--ops", *names, "--scheduler", address], env=env,
                               capture_output=True, text=True, check=False, timeout=180)
        assert first.returncode == 0, first.stdout + first.stderr
        [campaign] = (tmp_path / "runs").glob("screen_*")
        # As if killed while add/B ran: its identity lacks the last stamp.
        ident_path = campaign / "add" / "B" / "run_identity.json"
        ident = json.loads(ident_path.read_text())
        del ident["finished"]
        ident_path.write_text(json.dumps(ident))
        meta = json.loads((campaign / "campaign.json").read_text())
        meta["state"] = "interrupted"
        (campaign / "campaign.json").write_text(json.dumps(meta))
        before = len(ledger(tmp_path))
        again = subprocess.run([sys.executable, str(LAUNCHER), "screen", "--resume", str(campaign)],
                               env=env, capture_output=True, text=True, check=False, timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = [(row[2], row[3]) for row in ledger(tmp_path)[before:] if row[0] == "start"]
    assert rerun == [("add", "B")]
    for name in names:
        for side in "AB":
            assert "finished" in json.loads((campaign / name / side / "run_identity.json").read_text())
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
