"""zl-backend-cuda: descriptor, capture-error wording, nvidia-smi commands and output.

Error texts are torch's own wording; the nvidia-smi lines were printed by the real
tool on the lent H200 (driver 580.159.04) for exactly the argv the plugin builds.
"""

from __future__ import annotations

import pytest
import zl_backend_cuda.plugin as cuda_plugin
import zl_backend_musa.plugin as musa_plugin
from fake_tools import calls, path_with, write_tool
from zl_core import PluginHost

# torch appends this to every CUDA error (torch 2.11, H200).
FOOTER = ("\nCUDA kernel errors might be asynchronously reported at some other API call, so the "
          "stacktrace below might be incorrect.\nFor debugging consider passing "
          "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
H200_SAMPLE = "0, 375, 3201, 35, 110.14, 0\n"


class AcceleratorError(RuntimeError):
    """Stands in for torch.AcceleratorError (torch is not installed in tests)."""


@pytest.fixture
def host():
    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0.1.0")
    host.register(musa_plugin, name="musa", package="zl-backend-musa", version="0.1.0")
    return host


@pytest.fixture
def cuda(host):
    return host.get_backend("nvidia")


def test_descriptor(cuda, host):
    assert cuda.name == "cuda"
    assert host.get_backend("nv") is cuda
    assert cuda.visibility_env_keys == ("CUDA_VISIBLE_DEVICES",)
    assert (cuda.torch_namespace, cuda.vendor) == ("cuda", "nvidia")
    assert cuda.graph_capture is True
    assert cuda.default_switch == "FLAGTREE_RLC_ENHANCE"
    assert cuda.capture_deny == frozenset()


@pytest.mark.parametrize("message", [
    "CUDA error: an illegal memory access was encountered" + FOOTER,
    ("CUDA error: device-side assert triggered\nSearch for `cudaErrorAssert' in "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information." + FOOTER),
    "CUDA error: misaligned address" + FOOTER,
    "CUDA error: an illegal instruction was encountered" + FOOTER,
    "CUDA error: unspecified launch failure" + FOOTER,
    "CUDA out of memory. Tried to allocate 2.00 GiB",
])
def test_device_faults_are_fatal(host, cuda, message):
    assert host.classify_capture_error(cuda, AcceleratorError(message)) == "fatal"


@pytest.mark.parametrize("message", [
    # What a refused capture raised on the H200 (the context survived it).
    ("CUDA error: operation failed due to a previous error during capture\nSearch for "
     "`cudaErrorStreamCaptureInvalidated' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
     "group__CUDART__TYPES.html for more information." + FOOTER),
    "CUDA error: operation not permitted when stream is capturing" + FOOTER,
    ("Cannot call CUDAGeneratorImpl::seed during CUDA graph capture. If you need this call to be "
     "captured, please file an issue. Current cudaStreamCaptureStatus: cudaStreamCaptureStatusActive"),
    ("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is "
     "pinned. Please use tensor.pin_memory() or allocate the tensor with pin_memory=True."),
    # The footer alone mentions device-side assertions; it must not make this fatal.
    "Cannot call current_seed during capture." + FOOTER,
])
def test_capture_refusals_fall_back(host, cuda, message):
    assert host.classify_capture_error(cuda, AcceleratorError(message)) == "recoverable"


def test_musa_wording_means_nothing_on_cuda(host, cuda):
    assert host.classify_capture_error(cuda, RuntimeError("MUSA error: unknown error")) == "recoverable"


def test_telemetry_argv_pins_a_device_only_when_given(host, cuda):
    base = ["nvidia-smi",
            "--query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu",
            "--format=csv,noheader,nounits"]
    assert host.telemetry_command(cuda, None) == base
    assert host.telemetry_command(cuda, "") == base  # never a bare trailing -i
    assert host.telemetry_command(cuda, "3") == [*base, "-i", "3"]


def test_parses_real_nvidia_smi_output(host, cuda):
    raw = H200_SAMPLE + "1, 1980, 2619, 41, 122.35, 63\n"
    assert host.parse_telemetry(cuda, raw) == [
        {"index": "0", "sm_clock_mhz": "375", "mem_clock_mhz": "3201", "temp_c": "35",
         "power_w": "110.14", "util_pct": "0"},
        {"index": "1", "sm_clock_mhz": "1980", "mem_clock_mhz": "2619", "temp_c": "41",
         "power_w": "122.35", "util_pct": "63"},
    ]


def test_unavailable_readings_become_empty(host, cuda):
    # nvidia-smi prints "[N/A]" (seen on the H200 for fan.speed) or "[Not Supported]".
    rows = host.parse_telemetry(cuda, "0, 345, 3201, 35, [N/A], [Not Supported]\n")
    assert rows[0]["power_w"] == "" and rows[0]["util_pct"] == ""
    assert rows[0]["sm_clock_mhz"] == "345"


@pytest.mark.parametrize("raw", ["", "No devices were found\n", "0, 375, 3201\n",
                                 '{"GPU": [{"Index": "0"}]}'])
def test_nothing_parseable_gives_no_rows(host, cuda, raw):
    assert host.parse_telemetry(cuda, raw) == []


def test_other_backends_get_no_answer_from_the_cuda_plugin(host):
    musa = host.get_backend("musa")
    assert host.parse_telemetry(musa, H200_SAMPLE) == []
    assert host.telemetry_command(musa, None)[0] == "mthreads-gmi"


def test_devices_come_from_nvidia_smi(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", "0\n1\n")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert host.enumerate_devices(cuda) == ["0", "1"]
    assert calls(bin_dir) == [["--query-gpu=index", "--format=csv,noheader"]]


def test_a_failing_nvidia_smi_gives_no_device_list(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", "NVIDIA-SMI has failed because it couldn't communicate "
               "with the NVIDIA driver.\n", rc=9)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    assert cuda_plugin.zl_enumerate_devices(backend=cuda) is None


def test_without_nvidia_smi_the_plugin_declines(cuda, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cuda_plugin.zl_enumerate_devices(backend=cuda) is None
    assert cuda_plugin.zl_device_identity(backend=cuda, device="0") is None


def test_identity_from_nvidia_smi(host, cuda, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "nvidia-smi", "NVIDIA H200, GPU-cd704515-6cad-8384-6cf9-740a3ce6c565, 580.159.04\n")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,6")
    assert host.device_identity(cuda, None) == {
        "device_name": "NVIDIA H200", "device_uuid": "GPU-cd704515-6cad-8384-6cf9-740a3ce6c565",
        "driver_version": "580.159.04"}
    # Unpinned: nvidia-smi ignores the mask, so it is asked about the mask's first entry.
    assert calls(bin_dir)[-1][-2:] == ["-i", "5"]
