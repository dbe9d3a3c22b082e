"""The Dask executor against a real scheduler and two ``zl worker`` processes on 127.0.0.1."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("distributed")

from dask_cluster import FAKES, cluster

sys.path.insert(0, str(FAKES))
from test_lanes_executor import ListSink, pair_tasks
from zl_core.campaigns.dask_executor import TASKS_TSV, DaskExecutor
from zl_fake_lanes import Runtime, run_pair


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
