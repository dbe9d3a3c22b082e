"""Other processes on a campaign's devices, as the vendor's tool lists them
(``zl_device_processes``; the real CUDA backend over the fake nvidia-smi of tests/fake_lanes, whose $FAKE_SMI_APPS are its
compute processes): named before any cell runs, then refused or recorded."""

from __future__ import annotations

import json

import zl_backend_cuda.plugin as cuda_plugin
from test_lanes_cli import campaigns, screen_args, zl  # noqa: F401 - the fixture: the fake 4-GPU host

APPS = "1:4242:python3:1024;3:777:train.py:30000"


def test_a_screen_refuses_a_device_another_process_uses(zl, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("FAKE_SMI_APPS", APPS)
    assert zl([*screen_args("--ops", "abs", "add", "--devices", "0,1")]) == 7
    err = capsys.readouterr().err
    (line,) = [ln for ln in err.splitlines() if "another process" in ln]
    assert line == ("zl screen: another process uses the device (device 1: pid 4242 python3 "
                    "(1024 MiB)); its work would be timed with this campaign's. Wait for it, pick "
                    "another device, or run anyway with --other-processes record (campaign.json "
                    "keeps them as a condition)")
    assert "Traceback" not in err and not campaigns(tmp_path)  # nothing ran, nothing written


def test_recorded_it_runs_and_campaign_json_keeps_it(zl, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("FAKE_SMI_APPS", APPS)
    assert zl([*screen_args("--ops", "abs", "--devices", "1,2", "--other-processes", "record")]) == 0
    assert "running anyway (--other-processes record)" in capsys.readouterr().err
    [campaign] = campaigns(tmp_path)
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["device_processes"] == {"1": [{"pid": "4242", "name": "python3", "used_mib": "1024"}]}
    # The report says it first, as a condition of every number in it.
    assert zl(["report", str(campaign), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes[0] == ("ran beside other processes on its devices (--other-processes record): "
                        "device 1: pid 4242 python3 (1024 MiB); their work shared the device with "
                        "the cells")


def test_idle_devices_pass_and_record_nothing(zl, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("FAKE_SMI_APPS", "3:777:train.py:30000")
    assert zl([*screen_args("--ops", "abs", "--devices", "0,1")]) == 0
    [campaign] = campaigns(tmp_path)
    assert "device_processes" not in json.loads((campaign / "campaign.json").read_text())
    capsys.readouterr()
    assert zl(["report", str(campaign), "--json"]) == 0
    assert not any("beside other processes" in n for n in json.loads(capsys.readouterr().out)["notes"])


def test_the_cuda_backend_lists_one_devices_processes_by_its_uuid(lanes_host, monkeypatch):
    monkeypatch.setenv("FAKE_SMI_APPS", APPS)
    cuda = lanes_host.get_backend("cuda")
    assert lanes_host.device_processes(cuda, "3") == [{"pid": "777", "name": "train.py", "used_mib": "30000"}]
    assert lanes_host.device_processes(cuda, "0") == []
    assert cuda_plugin.APPS_QUERY.startswith("--query-compute-apps=gpu_uuid,")
