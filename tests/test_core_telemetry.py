"""zl_core.plugins.telemetry: one sample through any backend's sampler, or the reason there is none."""

from __future__ import annotations

import datetime as dt

import pytest
import zl_backend_cuda.plugin as cuda_plugin
from fake_tools import calls, path_with, write_tool
from zl_core import Backend, PluginHost, hookimpl
from zl_core.plugins import telemetry

H200_SAMPLE = "0, 375, 3201, 35, 110.14, 0\n"


@pytest.fixture
def host():
    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    return host


@pytest.fixture
def cuda(host):
    return host.get_backend("cuda")


def test_a_sample_from_the_real_format(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    rows, reason = telemetry.sample_once(host, cuda, "0")
    assert reason == ""
    assert rows == [{"index": "0", "sm_clock_mhz": "375", "mem_clock_mhz": "3201", "temp_c": "35",
                     "power_w": "110.14", "util_pct": "0"}]
    assert calls(bin_dir)[0][-2:] == ["-i", "0"]


def test_missing_tool(host, cuda, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    rows, reason = telemetry.sample_once(host, cuda, None)
    assert rows == [] and reason == "telemetry sampler 'nvidia-smi' is not on PATH"


def test_failing_tool_names_its_exit_code_and_message(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", "No devices were found\n", rc=6)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    rows, reason = telemetry.sample_once(host, cuda, "7")
    assert rows == []
    assert "exited 6" in reason and "No devices were found" in reason


def test_unparseable_output(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", "Failed to initialize NVML: Driver/library version mismatch\n")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    rows, reason = telemetry.sample_once(host, cuda, None)
    assert rows == []
    assert "nothing the cuda parser understands" in reason and "NVML" in reason


def test_hanging_tool_times_out(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    tool = bin_dir / "nvidia-smi"
    bin_dir.mkdir()
    tool.write_text("#!/bin/sh\nexec sleep 30\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    rows, reason = telemetry.sample_once(host, cuda, None, timeout=0.3)
    assert rows == [] and "no answer within 0.3s" in reason


def test_backend_without_sampler():
    class Quiet:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="quiet")]

    host = PluginHost()
    host.register(Quiet(), name="quiet")
    rows, reason = telemetry.sample_once(host, host.get_backend("quiet"), None)
    assert rows == [] and reason == "backend quiet declares no telemetry sampler"


def test_a_parser_that_raises_becomes_a_reason(tmp_path, monkeypatch):
    class Fragile:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="fragile")]

        @hookimpl
        def zl_telemetry_command(self, backend):
            return ["fragile-smi"]

        @hookimpl
        def zl_parse_telemetry(self, backend, raw):
            raise KeyError("Clocks")

    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "fragile-smi", "{}")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    host = PluginHost()
    host.register(Fragile(), name="fragile")
    rows, reason = telemetry.sample_once(host, host.get_backend("fragile"), None)
    assert rows == [] and "parser failed: plugin fragile: zl_parse_telemetry raised KeyError" in reason


@pytest.mark.parametrize("env,device,expected", [
    ({"CUDA_VISIBLE_DEVICES": "7"}, None, "7"),
    ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, None, None),  # a list: sample them all
    ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, "3", "3"),    # explicit wins
    ({}, None, None),
    ({"CUDA_VISIBLE_DEVICES": " "}, None, None),
])
def test_sampler_device(cuda, env, device, expected):
    assert telemetry.sampler_device(cuda, device, env) == expected


def test_rows_format_as_tsv_under_the_header():
    assert telemetry.HEADER.split("\t") == ["timestamp", "index", "sm_clock_mhz", "mem_clock_mhz",
                                            "temp_c", "power_w", "util_pct"]
    stamp = telemetry.utc_timestamp(dt.datetime(2026, 9, 10, 15, 41, 12, 999,
                                                tzinfo=dt.timezone(dt.timedelta(hours=8))))
    assert stamp == "2026-09-10T07:41:12Z"
    (line,) = telemetry.format_rows([{"index": "7", "sm_clock_mhz": "1888", "power_w": "477.68"}], stamp)
    assert line == "2026-09-10T07:41:12Z\t7\t1888\t\t\t477.68\t"
