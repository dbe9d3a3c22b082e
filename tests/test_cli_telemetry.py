"""``zl telemetry``: TSV from the backend's real sampler format, and quiet failure modes."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_backend_musa.plugin as musa_plugin
import zl_core.cli.telemetry as telemetry_cli
import zl_core.plugins.host as host_module
from fake_tools import calls, path_with, write_tool
from zl_core import PluginHost
from zl_core.cli import main

HEADER = "timestamp\tindex\tsm_clock_mhz\tmem_clock_mhz\ttemp_c\tpower_w\tutil_pct"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
H200_SAMPLE = "0, 375, 3201, 35, 110.14, 0\n"
S5000_SAMPLE = ('{"Attached GPUs": "8", "GPU": [{"Index": "7", "Temperature": {"GPU Current Temp": "36C"}, '
                '"Clocks": {"Graphics": "1888MHz", "Memory": "2500MHz", "Video": "0MHz"}, '
                '"Power Readings": {"Power Draw ": "477.68W", "Current Power Limit": "950.00W"}, '
                '"Utilization": {"Gpu": "87%", "Memory": "14%"}}]}')


@pytest.fixture
def host(monkeypatch):
    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    host.register(musa_plugin, name="musa", package="zl-backend-musa", version="0.1.0")
    monkeypatch.setattr(host_module, "_HOST", host)
    for key in ("CUDA_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES", "ZL_BACKEND"):
        monkeypatch.delenv(key, raising=False)
    return host


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    path = tmp_path / "bin"
    path.mkdir()
    monkeypatch.setenv("PATH", path_with(path))
    return path


def _table(out: str) -> list[list[str]]:
    return [line.split("\t") for line in out.splitlines()]


def test_once_prints_header_and_rows(host, bin_dir, capsys):
    write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
    assert main(["telemetry", "--backend", "nvidia", "--once"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header == HEADER
    stamp, *values = row.split("\t")
    assert STAMP.match(stamp)
    assert values == ["0", "375", "3201", "35", "110.14", "0"]


def test_device_is_passed_to_the_sampler(host, bin_dir, capsys):
    write_tool(bin_dir, "mthreads-gmi", S5000_SAMPLE)
    assert main(["telemetry", "--backend", "mthreads", "--device", "7", "--once"]) == 0
    assert _table(capsys.readouterr().out)[1][1:] == ["7", "1888", "2500", "36", "477.68", "87"]
    assert calls(bin_dir)[0][-2:] == ["-i", "7"]


def test_single_visible_device_pins_the_sampler(host, bin_dir, monkeypatch, capsys):
    write_tool(bin_dir, "mthreads-gmi", S5000_SAMPLE)
    monkeypatch.setenv("MUSA_VISIBLE_DEVICES", "7")
    main(["telemetry", "--backend", "musa", "--once"])
    assert calls(bin_dir)[0][-2:] == ["-i", "7"]


@pytest.mark.parametrize("setup,expected", [
    (lambda d: None, "'nvidia-smi' is not on PATH"),
    (lambda d: write_tool(d, "nvidia-smi", "", rc=9, stderr="NVIDIA-SMI has failed because it couldn't "
                          "communicate with the NVIDIA driver.\n"), "exited 9: NVIDIA-SMI has failed"),
    (lambda d: write_tool(d, "nvidia-smi", "No devices were found\n"), "nothing the cuda parser understands"),
])
def test_no_sample_means_reason_on_stderr_no_header_exit_0(host, bin_dir, capsys, setup, expected):
    setup(bin_dir)
    assert main(["telemetry", "--backend", "cuda", "--once"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert expected in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_backend_without_sampler(monkeypatch, capsys):
    from zl_core import Backend, hookimpl

    class Quiet:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="quiet")]

    host = PluginHost()
    host.register(Quiet(), name="quiet")
    monkeypatch.setattr(host_module, "_HOST", host)
    monkeypatch.delenv("ZL_BACKEND", raising=False)
    assert main(["telemetry", "--once"]) == 0  # the only backend installed
    captured = capsys.readouterr()
    assert captured.out == "" and "declares no telemetry sampler" in captured.err


def test_unknown_backend_is_one_line_exit_2(host, capsys):
    assert main(["telemetry", "--backend", "tpu", "--once"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "unknown backend 'tpu'" in err and "nvidia" in err and "mthreads" in err


def test_bad_interval_is_a_usage_error(host, capsys):
    with pytest.raises(SystemExit) as info:
        main(["telemetry", "--backend", "cuda", "--interval", "0"])
    assert info.value.code == 2
    assert "expected a number > 0" in capsys.readouterr().err


def test_samples_every_interval_until_ctrl_c(host, bin_dir, monkeypatch, capsys):
    write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
    sleeps = []

    def fake_sleep(seconds):
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(telemetry_cli, "sleep", fake_sleep)
    assert main(["telemetry", "--backend", "cuda", "--interval", "2.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines.count(HEADER) == 1 and len(lines) == 3
    assert sleeps == [2.5, 2.5]
    assert len(calls(bin_dir)) == 2


def test_a_failure_mid_run_is_noted_and_sampling_goes_on(host, bin_dir, monkeypatch, capsys):
    write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
    state = {"n": 0}

    def fake_sleep(seconds):
        state["n"] += 1
        if state["n"] == 1:
            write_tool(bin_dir, "nvidia-smi", "", rc=15, stderr="GPU is lost\n")
        elif state["n"] == 2:
            write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
        else:
            raise KeyboardInterrupt

    monkeypatch.setattr(telemetry_cli, "sleep", fake_sleep)
    assert main(["telemetry", "--backend", "cuda", "--interval", "1"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 3  # header + two good samples
    assert "GPU is lost" in captured.err


def test_exits_quietly_when_the_reader_goes_away(tmp_path):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
    env = dict(os.environ, PATH=path_with(bin_dir))
    env.pop("ZL_DISABLE_PLUGINS", None)
    proc = subprocess.Popen([sys.executable, "-m", "zl_core", "telemetry", "--backend", "cuda",
                             "--interval", "0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    assert proc.stdout.readline().decode().rstrip("\n") == HEADER
    proc.stdout.close()  # like `zl telemetry ... | head -1`
    try:
        rc = proc.wait(timeout=30)
    finally:
        proc.kill()
    assert rc == 0
    err = proc.stderr.read().decode()
    assert err == "", err
