"""zl-backend-rocm: descriptor, HIP error wording, rocm-smi commands and JSON.

Samples: tests/data/rocm_smi_*.json (see tests/data/README.md for their sources).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_backend_rocm.plugin as rocm_plugin
from fake_tools import calls, path_with, write_tool
from zl_core import PluginHost

DATA = Path(__file__).with_name("data")
MI100 = (DATA / "rocm_smi_mi100_rocm602.json").read_text()
RX6700 = (DATA / "rocm_smi_rx6700xt_rocm612.json").read_text()
# An MI300X's report as its owner recorded it (a rocm-smi --json excerpt): no edge
# sensor, and the power under the "Current Socket" spelling.
MI300X = ('{"card0": {"Temperature (Sensor junction) (C)": "45.0",'
          ' "Temperature (Sensor memory) (C)": "38.0",'
          ' "Max Graphics Package Power (W)": "750.0",'
          ' "Current Socket Graphics Package Power (W)": "159.0",'
          ' "GPU use (%)": "0",'
          ' "VRAM Total Memory (B)": "205822885888",'
          ' "VRAM Total Used Memory (B)": "299687936"}}')
# ROCm torch's wording (torch.AcceleratorError on ROCm 7 / PyTorch 2.8).
HIP_FOOTER = ("\nHIP kernel errors might be asynchronously reported at some other API call, so the "
              "stacktrace below might be incorrect.\nFor debugging consider passing "
              "AMD_SERIALIZE_KERNEL=3\nCompile with `TORCH_USE_HIP_DSA` to enable device-side assertions.")


@pytest.fixture
def host():
    host = PluginHost()
    host.register(rocm_plugin, name="rocm", package="zl-backend-rocm", version="0.1.0")
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    return host


@pytest.fixture
def rocm(host):
    return host.get_backend("amd")


def test_descriptor(host, rocm):
    assert host.get_backend("hip") is rocm
    assert rocm.visibility_env_keys == ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
    assert (rocm.torch_namespace, rocm.vendor) == ("cuda", "amd")
    assert rocm.graph_capture is True
    assert rocm.default_switch == ""  # not confirmed for FlagTree's AMD path


def test_illegal_address_is_fatal_and_the_footer_is_not(host, rocm):
    real = ("HIP error: an illegal memory access was encountered\nSearch for `hipErrorIllegalAddress' "
            "in https://rocm.docs.amd.com/projects/HIP/en/latest/index.html for more information." + HIP_FOOTER)
    assert host.classify_capture_error(rocm, RuntimeError(real)) == "fatal"
    assert host.classify_capture_error(rocm, RuntimeError("capture refused" + HIP_FOOTER)) == "recoverable"


def test_telemetry_argv(host, rocm):
    base = ["rocm-smi", "--showtemp", "--showpower", "--showclocks", "--showuse", "--json"]
    assert host.telemetry_command(rocm, None) == base
    assert host.telemetry_command(rocm, "2") == [*base, "-d", "2"]


def test_parses_mi100_report(host, rocm):
    assert host.parse_telemetry(rocm, MI100) == [
        {"index": "0", "sm_clock_mhz": "300", "mem_clock_mhz": "1200", "temp_c": "53.0",
         "power_w": "36.0", "util_pct": "0"},
        {"index": "1", "sm_clock_mhz": "300", "mem_clock_mhz": "1200", "temp_c": "55.0",
         "power_w": "44.0", "util_pct": "0"},
    ]


def test_mi300x_falls_back_to_junction_and_socket_power(host, rocm):
    (row,) = host.parse_telemetry(rocm, MI300X)
    assert (row["temp_c"], row["power_w"], row["sm_clock_mhz"]) == ("45.0", "159.0", "")


def test_consumer_card_report(host, rocm):
    (row,) = host.parse_telemetry(rocm, RX6700)
    assert row == {"index": "0", "sm_clock_mhz": "0", "mem_clock_mhz": "96", "temp_c": "45.0",
                   "power_w": "6.0", "util_pct": "0"}


def test_cards_are_ordered_by_number_and_warnings_are_skipped(host, rocm):
    report = json.loads(MI100)
    shuffled = {"card10": report["card1"], "card2": report["card0"], "system": report["system"]}
    raw = "WARNING: AMD GPU device(s) is/are in a low-power state\n" + json.dumps(shuffled)
    assert [r["index"] for r in host.parse_telemetry(rocm, raw)] == ["2", "10"]


@pytest.mark.parametrize("raw", ["", "ERROR: GPU[0] : Unable to read", "{", '{"system": {}}'])
def test_garbage_gives_no_rows(host, rocm, raw):
    assert host.parse_telemetry(rocm, raw) == []


def test_cuda_plugin_does_not_read_rocm_output(host):
    assert host.parse_telemetry(host.get_backend("cuda"), MI100) == []


def test_identity_reads_either_spelling_and_skips_na(host, rocm, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "rocm-smi", RX6700)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    assert host.device_identity(rocm, "0") == {
        "device_name": "Navi 22 [Radeon RX 6700/6700 XT / 6800M]", "device_arch": "gfx1031"}
    write_tool(bin_dir, "rocm-smi", MI100)
    assert host.device_identity(rocm, "0") == {
        "device_name": "Arcturus GL-XL [Instinct MI100]", "device_uuid": "0x79ccd55167a2124a"}
    assert calls(bin_dir)[-1][-2:] == ["-d", "0"]


def test_device_count_from_rocm_smi(host, rocm, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "rocm-smi", MI100)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    for key in ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(key, raising=False)
    assert host.enumerate_devices(rocm) == ["0", "1"]
