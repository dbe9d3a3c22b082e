"""zl-backend-ascend: descriptor and the npu-smi info table.

Samples: tests/data/npu_smi_info_*.txt (see tests/data/README.md for their sources).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import zl_backend_ascend.plugin as ascend_plugin
import zl_backend_musa.plugin as musa_plugin
from fake_tools import calls, path_with, write_tool
from zl_core import PluginHost

DATA = Path(__file__).with_name("data")
TABLE_910B3 = (DATA / "npu_smi_info_910b3.txt").read_text()
TABLE_310P3 = (DATA / "npu_smi_info_310p3.txt").read_text()


@pytest.fixture
def host():
    host = PluginHost()
    host.register(ascend_plugin, name="ascend", package="zl-backend-ascend", version="0.1.0")
    host.register(musa_plugin, name="musa", package="zl-backend-musa", version="0.1.0")
    return host


@pytest.fixture
def ascend(host):
    return host.get_backend("npu")


def test_descriptor(host, ascend):
    assert host.get_backend("huawei") is ascend
    assert ascend.visibility_env_keys == ("ASCEND_RT_VISIBLE_DEVICES",)
    assert (ascend.torch_namespace, ascend.torch_extension) == ("npu", "torch_npu")
    assert ascend.vendor == "ascend"
    assert ascend.graph_capture is False


def test_no_capture_wording_is_claimed(host, ascend):
    assert host.classify_capture_error(ascend, RuntimeError("MUSA error: unknown error")) == "recoverable"


def test_telemetry_argv_is_the_summary_table(host, ascend):
    assert host.telemetry_command(ascend, None) == ["npu-smi", "info"]
    assert host.telemetry_command(ascend, "3") == ["npu-smi", "info"]


def test_parses_eight_910b3(host, ascend):
    rows = host.parse_telemetry(ascend, TABLE_910B3)
    assert [r["index"] for r in rows] == [str(i) for i in range(8)]
    assert rows[0] == {"index": "0", "sm_clock_mhz": "", "mem_clock_mhz": "", "temp_c": "55",
                       "power_w": "102.8", "util_pct": "0"}
    assert (rows[7]["power_w"], rows[7]["temp_c"]) == ("105.1", "59")


def test_parses_310p3_with_na_power_and_a_non_zero_npu_id(host, ascend):
    assert host.parse_telemetry(ascend, TABLE_310P3) == [
        {"index": "24", "sm_clock_mhz": "", "mem_clock_mhz": "", "temp_c": "29",
         "power_w": "", "util_pct": "0"}]


@pytest.mark.parametrize("raw", ["", "npu-smi: command not found", "dcmi module initialize failed. ret is -8005"])
def test_garbage_gives_no_rows(host, ascend, raw):
    assert host.parse_telemetry(ascend, raw) == []


def test_musa_plugin_does_not_read_the_table(host):
    assert host.parse_telemetry(host.get_backend("musa"), TABLE_910B3) == []


def test_devices_are_logical_ids_counted_from_zero(host, ascend, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "npu-smi", TABLE_310P3)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    assert host.enumerate_devices(ascend) == ["0"]  # NPU ID 24 is logical device 0
    write_tool(bin_dir, "npu-smi", TABLE_910B3)
    assert host.enumerate_devices(ascend) == [str(i) for i in range(8)]
    assert calls(bin_dir)[-1] == ["info"]


def test_identity_names_the_chip(host, ascend, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "npu-smi", TABLE_910B3)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    assert host.device_identity(ascend, "3") == {"device_name": "910B3"}
    assert host.device_identity(ascend, "9") == {}
