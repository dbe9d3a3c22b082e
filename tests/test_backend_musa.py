"""zl-backend-musa: descriptor, MUSA capture-error wording, mthreads-gmi JSON.

The JSON sample was captured on a Moore Threads S5000 (index 7 pinned with -i); the
error texts are those torch_musa raised there.
"""

from __future__ import annotations

import json

import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_backend_musa.plugin as musa_plugin
from fake_tools import calls, path_with, write_tool
from zl_core import PluginHost

S5000_SAMPLE = """
{
  "Attached GPUs": "8",
  "GPU": [
    {
      "Index": "7",
      "Temperature": {"GPU Current Temp": "36C"},
      "Clocks": {"Graphics": "1888MHz", "Memory": "2500MHz", "Video": "0MHz"},
      "Power Readings": {"Power Draw ": "477.68W", "Current Power Limit": "950.00W"},
      "Utilization": {"Gpu": "87%", "Memory": "14%"}
    }
  ]
}
"""
ROW_7 = {"index": "7", "sm_clock_mhz": "1888", "mem_clock_mhz": "2500", "temp_c": "36",
         "power_w": "477.68", "util_pct": "87"}


@pytest.fixture
def host():
    host = PluginHost()
    host.register(musa_plugin, name="musa", package="zl-backend-musa", version="0.1.0")
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    return host


@pytest.fixture
def musa(host):
    return host.get_backend("mthreads")


def test_descriptor(host, musa):
    assert host.get_backend("moore") is musa and host.get_backend("mt") is musa
    assert musa.visibility_env_keys == ("MUSA_VISIBLE_DEVICES",)
    assert (musa.torch_namespace, musa.torch_extension) == ("musa", "torch_musa")
    assert musa.vendor == "mthreads"  # the vendor's name, not "musa"
    assert musa.graph_capture is True
    assert musa.default_switch == "FLAGTREE_MUSA_RLC_ENHANCE"


def test_deny_list_is_keyed_by_pytest_function_name(musa):
    assert "unique2" in musa.capture_deny      # test_unique2
    assert "unique" not in musa.capture_deny   # the file-name key never matches


@pytest.mark.parametrize("message,verdict", [
    ("MUSA error: unknown error", "poisoned"),
    ("MUSA error: an illegal memory access was encountered", "fatal"),
    ("Cannot call MUSAGeneratorImpl::current_seed during MUSA graph capture", "recoverable"),
    ("operation not permitted when stream is capturing", "recoverable"),
])
def test_musa_wording(host, musa, message, verdict):
    assert host.classify_capture_error(musa, RuntimeError(message)) == verdict


def test_cuda_wording_does_not_poison_musa(host, musa):
    exc = RuntimeError("CUDA error: operation failed due to a previous error during capture")
    assert host.classify_capture_error(musa, exc) == "recoverable"


def test_telemetry_argv(host, musa):
    base = ["mthreads-gmi", "-q", "-d", "TEMPERATURE,CLOCK,POWER,UTILIZATION", "--json"]
    assert host.telemetry_command(musa, None) == base
    assert host.telemetry_command(musa, "") == base
    assert host.telemetry_command(musa, "7") == [*base, "-i", "7"]


def test_parses_real_json_with_units_and_the_spaced_power_key(host, musa):
    assert host.parse_telemetry(musa, S5000_SAMPLE) == [ROW_7]


def test_every_device_when_none_is_pinned(host, musa):
    report = json.loads(S5000_SAMPLE)
    second = json.loads(json.dumps(report["GPU"][0]).replace('"7"', '"3"').replace("1888MHz", "1500MHz"))
    report["GPU"].append(second)
    rows = host.parse_telemetry(musa, json.dumps(report, indent=4))
    assert [(r["index"], r["sm_clock_mhz"]) for r in rows] == [("7", "1888"), ("3", "1500")]


def test_a_single_gpu_object_and_leading_noise_are_tolerated(host, musa):
    report = json.loads(S5000_SAMPLE)
    report["GPU"] = report["GPU"][0]
    assert host.parse_telemetry(musa, "note: driver 3.x\n" + json.dumps(report)) == [ROW_7]


@pytest.mark.parametrize("raw", ["", "no such tool", "{broken json", "[1, 2]", '{"GPU": "n/a"}'])
def test_garbage_gives_no_rows(host, musa, raw):
    assert host.parse_telemetry(musa, raw) == []


def test_cuda_does_not_read_musa_output(host):
    assert host.parse_telemetry(host.get_backend("cuda"), S5000_SAMPLE) == []


def test_devices_from_the_unpinned_report(host, musa, tmp_path, monkeypatch):
    report = json.loads(S5000_SAMPLE)
    report["GPU"] = [dict(report["GPU"][0], Index=str(i)) for i in range(2)]
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "mthreads-gmi", json.dumps(report))
    monkeypatch.setenv("PATH", path_with(bin_dir))
    monkeypatch.delenv("MUSA_VISIBLE_DEVICES", raising=False)
    assert host.enumerate_devices(musa) == ["0", "1"]
    assert "-i" not in calls(bin_dir)[0]


def test_without_the_tool_the_plugin_declines(musa, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert musa_plugin.zl_enumerate_devices(backend=musa) is None
