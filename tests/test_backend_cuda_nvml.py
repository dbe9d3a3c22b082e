"""zl-backend-cuda's NVML sampler (zl_sample_telemetry): where pynvml is importable the
CUDA backend samples in-process, with what nvidia-smi would print for the same device;
where NVML cannot start it falls back to nvidia-smi and says why once.

There is no GPU here, so ``pynvml`` is a stand-in put on the path by each test. It
speaks the real module's API: the names, arguments, units and exception classes of
nvidia-ml-py's pynvml.py, read in its releases 11.450.51 and 13.615.71 (nvmlInit;
nvmlDeviceGetCount; nvmlDeviceGetHandleByIndex; nvmlDeviceGetHandleByUUID taking bytes,
as 11.450.51's ``c_char_p(uuid)`` does; nvmlDeviceGetIndex; nvmlDeviceGetClockInfo with
NVML_CLOCK_SM = 1 and NVML_CLOCK_MEM = 2, in MHz; nvmlDeviceGetTemperature with
NVML_TEMPERATURE_GPU = 0, in C; nvmlDeviceGetPowerUsage in milliwatts;
nvmlDeviceGetUtilizationRates(h).gpu in percent; NVMLError(value) turning into its
NVMLError_<Name> subclass, whose str() is NVML's wording). The nvidia-smi line is what
the real tool printed on the lent H200 (tests/test_backend_cuda.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_core.plugins.host as host_module
from fake_tools import calls, path_with, write_tool
from zl_backend_cuda.nvml import NvmlSampler
from zl_core import PluginHost, TelemetryReading, hookimpl
from zl_core.campaigns.telemetry_sampler import TelemetrySampler
from zl_core.cli import main
from zl_core.plugins import telemetry

H200_SAMPLE = "0, 375, 3201, 35, 110.14, 0\n"  # nvidia-smi on the lent H200
H200 = {"uuid": "GPU-a", "sm": 375, "mem": 3201, "temp": 35, "power_mw": 110140, "util": 0}

FAKE_PYNVML = '''
"""Stand-in for nvidia-ml-py's pynvml (its API, answering from the JSON file $FAKE_NVML)."""
import json, os

NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
_WORDS = {1: "Uninitialized", 2: "Invalid Argument", 3: "Not Supported", 9: "Driver Not Loaded",
          12: "NVML Shared Library Not Found", 15: "GPU is lost",
          18: "RM has detected an NVML/RM version mismatch."}


class NVMLError(Exception):
    _valClassMapping = {}

    def __new__(typ, value):
        if typ == NVMLError:
            typ = NVMLError._valClassMapping.get(value, typ)
        obj = Exception.__new__(typ)
        obj.value = value
        return obj

    def __str__(self):
        return _WORDS.get(self.value, "NVML Error with code %d" % self.value)


for _value, _name in ((1, "Uninitialized"), (2, "InvalidArgument"), (3, "NotSupported"),
                      (9, "DriverNotLoaded"), (12, "LibraryNotFound"), (15, "GpuIsLost"),
                      (18, "LibRmVersionMismatch")):
    _cls = type("NVMLError_" + _name, (NVMLError,),
                {"__new__": (lambda v: lambda typ, *a: NVMLError.__new__(typ, v))(_value)})
    NVMLError._valClassMapping[_value] = _cls
    globals()[_cls.__name__] = _cls

_ready = False


def _state():
    with open(os.environ["FAKE_NVML"]) as fh:
        return json.load(fh)


def _log(*call):
    with open(os.environ["FAKE_NVML"] + ".log", "a") as fh:
        fh.write(json.dumps(call) + "\\n")


def _device(handle, key):
    if not _ready:
        raise NVMLError(1)
    device = _state()["devices"][handle.index]
    if device.get("lost"):
        raise NVMLError(15)
    if device[key] is None:
        raise NVMLError(3)
    return device[key]


class c_nvmlDevice_t:
    def __init__(self, index):
        self.index = index


class c_nvmlUtilization_t:
    def __init__(self, gpu, memory):
        self.gpu, self.memory = gpu, memory


def nvmlInit():
    global _ready
    _log("nvmlInit")
    error = _state().get("init_error")
    if error:
        raise NVMLError(error)
    _ready = True


def nvmlDeviceGetCount():
    if not _ready:
        raise NVMLError(1)
    return len(_state()["devices"])


def nvmlDeviceGetHandleByIndex(index):
    _log("nvmlDeviceGetHandleByIndex", index)
    if not 0 <= index < nvmlDeviceGetCount():
        raise NVMLError(2)
    return c_nvmlDevice_t(index)


def nvmlDeviceGetHandleByUUID(uuid):
    _log("nvmlDeviceGetHandleByUUID", repr(uuid))
    if not isinstance(uuid, bytes):  # ctypes' own words for c_char_p(str)
        raise TypeError("bytes or integer address expected instead of str instance")
    for i, device in enumerate(_state()["devices"]):
        if device["uuid"].encode() == uuid:
            return c_nvmlDevice_t(i)
    raise NVMLError(2)


def nvmlDeviceGetIndex(handle):
    return handle.index


def nvmlDeviceGetClockInfo(handle, type):
    return _device(handle, {NVML_CLOCK_SM: "sm", NVML_CLOCK_MEM: "mem"}[type])


def nvmlDeviceGetTemperature(handle, sensor):
    assert sensor == NVML_TEMPERATURE_GPU
    return _device(handle, "temp")


def nvmlDeviceGetPowerUsage(handle):
    return _device(handle, "power_mw")


def nvmlDeviceGetUtilizationRates(handle):
    return c_nvmlUtilization_t(_device(handle, "util"), 0)
'''


class FakeNvml:
    def __init__(self, site: Path, state: Path):
        self.site, self.state = site, state

    def set(self, *devices: dict, init_error: int | None = None) -> None:
        self.state.write_text(json.dumps({"devices": list(devices), "init_error": init_error}))

    def calls(self, name: str) -> list[list]:
        log = Path(f"{self.state}.log")
        lines = log.read_text().splitlines() if log.exists() else []
        return [c for c in map(json.loads, lines) if c[0] == name]


@pytest.fixture
def nvml(tmp_path, monkeypatch):
    site = tmp_path / "fake_pynvml"
    site.mkdir()
    (site / "pynvml.py").write_text(FAKE_PYNVML)
    fake = FakeNvml(site, tmp_path / "nvml.json")
    fake.set(H200)
    monkeypatch.setenv("FAKE_NVML", str(fake.state))
    monkeypatch.setattr(cuda_plugin, "NVML", NvmlSampler())  # NVML starts anew in each test
    sys.modules.pop("pynvml", None)
    monkeypatch.syspath_prepend(str(site))
    yield fake
    sys.modules.pop("pynvml", None)  # no later test may find the stand-in imported


@pytest.fixture
def host(monkeypatch):
    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    return host


@pytest.fixture
def smi(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", H200_SAMPLE)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    return bin_dir


def test_nvml_reads_what_nvidia_smi_prints_for_the_same_device(nvml, host, smi):
    cuda = host.get_backend("cuda")
    by_nvml = telemetry.take_sample(host, cuda, "0")
    assert by_nvml.sampler.startswith("NVML (pynvml from ") and by_nvml.passed_over == ""
    assert calls(smi) == []  # in-process: no nvidia-smi process
    cuda_plugin.NVML = NvmlSampler()
    sys.modules["pynvml"] = None  # not importable: nvidia-smi, as before
    by_smi = telemetry.take_sample(host, cuda, "0")
    assert by_smi.sampler == "nvidia-smi" and by_smi.passed_over == ""
    assert calls(smi)[0][-2:] == ["-i", "0"]
    assert by_nvml.rows == by_smi.rows == [{"index": "0", "sm_clock_mhz": "375", "mem_clock_mhz": "3201",
                                            "temp_c": "35", "power_w": "110.14", "util_pct": "0"}]


def test_the_device_is_chosen_as_nvidia_smi_chooses_it(nvml, host, smi):
    cuda = host.get_backend("cuda")
    nvml.set(H200, {**H200, "uuid": "GPU-b", "sm": 1980, "temp": None, "power_mw": 699999})
    every = host.sample_telemetry(cuda, None)
    assert [r["index"] for r in every.rows] == ["0", "1"]
    (second,) = host.sample_telemetry(cuda, "1").rows
    # No temperature sensor: "" as nvidia-smi's [N/A]; milliwatts to watts, two decimals.
    assert second == {"index": "1", "sm_clock_mhz": "1980", "mem_clock_mhz": "3201", "temp_c": "",
                      "power_w": "700.00", "util_pct": "0"}
    # CUDA_VISIBLE_DEVICES may name a device by its UUID: NVML looks it up the same way.
    assert host.sample_telemetry(cuda, "GPU-b").rows == (second,)
    assert nvml.calls("nvmlDeviceGetHandleByUUID") == [["nvmlDeviceGetHandleByUUID", "b'GPU-b'"]]
    assert calls(smi) == [] and len(nvml.calls("nvmlInit")) == 1


@pytest.mark.parametrize(("code", "words"), [
    (9, "nvmlInit failed: NVMLError_DriverNotLoaded: Driver Not Loaded"),
    (18, "nvmlInit failed: NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch."),
])
def test_nvml_that_cannot_start_falls_back_to_nvidia_smi_naming_why(nvml, host, smi, code, words):
    cuda = host.get_backend("cuda")
    nvml.set(H200, init_error=code)
    first = telemetry.take_sample(host, cuda, "0")
    assert first.rows == [telemetry.take_sample(host, cuda, "0").rows[0]] and first.sampler == "nvidia-smi"
    assert first.passed_over == f"{cuda_plugin.NVML.read('0').sampler} cannot sample ({words}); " \
                               "sampling with nvidia-smi instead"
    assert len(calls(smi)) == 2 and len(nvml.calls("nvmlInit")) == 1  # NVML is not asked again


def test_a_gpu_lost_mid_run_leaves_the_rest_to_nvidia_smi(nvml, host, smi):
    cuda = host.get_backend("cuda")
    assert telemetry.take_sample(host, cuda, "0").sampler.startswith("NVML")
    nvml.set({**H200, "lost": True})
    lost = telemetry.take_sample(host, cuda, "0")
    assert lost.sampler == "nvidia-smi" and lost.rows[0]["power_w"] == "110.14"
    assert "NVMLError_GpuIsLost: GPU is lost" in lost.passed_over
    nvml.set(H200)  # NVML would answer again, but the campaign stays on one sampler
    assert telemetry.take_sample(host, cuda, "0").sampler == "nvidia-smi"


def test_a_malformed_answer_is_the_plugins_fault_and_a_later_plugin_may_answer_instead(nvml, host):
    cuda = host.get_backend("cuda")

    class Wrong:
        @hookimpl
        def zl_sample_telemetry(self, backend, device):
            return {"index": "0"}

    host.register(Wrong(), name="wrong")
    assert host.sample_telemetry(cuda, "0").sampler.startswith("NVML")  # the next answer
    assert "plugin wrong: zl_sample_telemetry returned dict, not a TelemetryReading" in host.problems

    class Other:
        @hookimpl
        def zl_sample_telemetry(self, backend, device):
            return TelemetryReading(sampler="other", rows=[{"index": device, "power_w": 1.5}])

    host.register(Other(), name="other")
    assert host.sample_telemetry(cuda, "3") == TelemetryReading(sampler="other", rows=(
        {"index": "3", "sm_clock_mhz": "", "mem_clock_mhz": "", "temp_c": "", "power_w": "1.5",
         "util_pct": ""},))


def test_the_campaign_sampler_writes_nvml_rows_and_names_a_fallback_as_it_starts(nvml, host, smi, tmp_path):
    cuda = host.get_backend("cuda")
    sampler = TelemetrySampler(host, cuda, "0", tmp_path / "telemetry.tsv", 0.05)
    sampler.start()
    time.sleep(0.4)
    sampler.stop()
    lines = (tmp_path / "telemetry.tsv").read_text().splitlines()
    assert sampler.note == "" and sampler.samples >= 2 and calls(smi) == []
    assert lines[1].split("\t")[1:] == ["0", "375", "3201", "35", "110.14", "0"]
    cuda_plugin.NVML = NvmlSampler()
    nvml.set(H200, init_error=12)
    fallback = TelemetrySampler(host, cuda, "0", tmp_path / "fallback.tsv", 0.05)
    fallback.start()
    time.sleep(0.4)
    fallback.stop()
    assert fallback.note.startswith("telemetry: NVML (") and fallback.note.endswith(
        "cannot sample (nvmlInit failed: NVMLError_LibraryNotFound: NVML Shared Library Not Found); "
        "sampling with nvidia-smi instead")
    assert fallback.samples >= 2 and calls(smi)


def test_zl_doctor_says_which_sampler_is_in_use(nvml, host, smi, monkeypatch, capsys):
    monkeypatch.setattr(host_module, "_HOST", host)
    main(["doctor", "--backend", "cuda"])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if " sampler " in ln)
    assert line.split(None, 2)[:2] == ["ok", "sampler"]
    assert "in use: NVML (pynvml from " in line and line.endswith(", in-process (1 device(s) read)")
    cuda_plugin.NVML = NvmlSampler()
    nvml.set(H200, init_error=9)
    main(["doctor", "--backend", "cuda"])
    line = next(ln for ln in capsys.readouterr().out.splitlines() if " sampler " in ln)
    assert line.split(None, 2)[:2] == ["ok", "sampler"]
    assert f"in use: nvidia-smi at {smi / 'nvidia-smi'} answers (NVML (pynvml from " in line
    assert line.endswith("cannot sample: nvmlInit failed: NVMLError_DriverNotLoaded: Driver Not Loaded)")


def _zl_telemetry(nvml: FakeNvml, path: str, *argv: str) -> subprocess.Popen:
    env = {**os.environ, "PATH": path, "FAKE_NVML": str(nvml.state),
           "PYTHONPATH": os.pathsep.join([str(nvml.site), os.environ.get("PYTHONPATH", "")])}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return subprocess.Popen([sys.executable, "-m", "zl_core", "telemetry", "--backend", "cuda", *argv],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_zl_telemetry_samples_through_nvml_without_nvidia_smi(nvml, tmp_path):
    proc = _zl_telemetry(nvml, path_with(tmp_path / "empty"), "--once")  # no nvidia-smi anywhere
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == ""
    header, row = out.splitlines()
    assert header == telemetry.HEADER
    assert row.split("\t")[1:] == ["0", "375", "3201", "35", "110.14", "0"]


def test_zl_telemetry_names_the_nvml_failure_once_and_samples_with_nvidia_smi(nvml, smi):
    nvml.set(H200, init_error=9)
    proc = _zl_telemetry(nvml, path_with(smi), "--interval", "0.05")
    try:
        rows = [proc.stdout.readline() for _ in range(4)]  # the header, then three samples
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert [r.split("\t")[1:] for r in rows[1:]] == [["0", "375", "3201", "35", "110.14", "0\n"]] * 3
    said = [line for line in err.splitlines() if "interrupted by SIGTERM" not in line]
    assert said == [
        "zl telemetry: NVML (pynvml from " + str(nvml.site / "pynvml.py") + ") cannot sample (nvmlInit "
        "failed: NVMLError_DriverNotLoaded: Driver Not Loaded); sampling with nvidia-smi instead"]
