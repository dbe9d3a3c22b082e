"""The caller's device mask read as the vendor's runtime reads it (zl_core.plugins.visibility):
a set but empty mask hides every device, an entry the runtime cannot read or an index
the machine lacks is refused by name before any cell, and a good mask still pins cells to
its physical ids. Real zl processes on the fake host (tests/fake_lanes: nvidia-smi
lists $FAKE_SMI_DEVICES GPUs and ignores the mask, as the real tool does)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import zl_backend_cuda.plugin
import zl_backend_rocm.plugin
from test_lanes_processes import LAUNCHER, fake_env
from zl_core.foundation.errors import NoDeviceError, UsageError
from zl_core.plugins import visibility


def zl(tmp_path, *argv, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LAUNCHER), *argv], env=fake_env(tmp_path, **env),
                          capture_output=True, text=True, check=False, timeout=120)


def screen(tmp_path, **env) -> subprocess.CompletedProcess:
    return zl(tmp_path, "screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", **env)


@pytest.mark.parametrize(("mask", "devices", "line"), [
    ("", "4", ("zl screen: CUDA_VISIBLE_DEVICES='' hides every cuda device; unset it, or list the "
              "devices to use (CUDA_VISIBLE_DEVICES=0 or CUDA_VISIBLE_DEVICES=0,1)")),
    ("7", "1", ("zl screen: CUDA_VISIBLE_DEVICES=7 names cuda device 7, which this machine does not "
               "have (its tool lists 0); set CUDA_VISIBLE_DEVICES to devices it lists")),
    ("abc", "4", ("zl screen: CUDA_VISIBLE_DEVICES=abc: 'abc' is not a device index (0, 1, ...), a "
                 "GPU-... UUID or a MIG-... device; the runtime would hide it and every device "
                 "after it. Set the variable to the devices to use, or unset it")),
    ("0,-1,1", "4", ("zl screen: CUDA_VISIBLE_DEVICES=0,-1,1: '-1' is not a device index (0, 1, ...), "
                    "a GPU-... UUID or a MIG-... device; the runtime would hide it and every device "
                    "after it. Set the variable to the devices to use, or unset it")),
    ("1,1", "4", "zl screen: CUDA_VISIBLE_DEVICES=1,1 names 1 twice; list each device once"),
])
def test_a_mask_that_selects_no_real_device_is_refused_before_any_cell(tmp_path, mask, devices, line):
    done = screen(tmp_path, CUDA_VISIBLE_DEVICES=mask, FAKE_SMI_DEVICES=devices)
    assert done.returncode == 2, done.stderr
    assert [ln for ln in done.stderr.splitlines() if ln.strip()] == [line]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()  # nothing planned, nothing written


def test_a_good_mask_pins_cells_to_its_physical_ids(tmp_path):
    done = screen(tmp_path, CUDA_VISIBLE_DEVICES="2", FAKE_SMI_DEVICES="4")
    assert done.returncode == 0, done.stderr
    campaign = next((tmp_path / "runs").glob("screen_*"))
    identities = [json.loads(p.read_text()) for p in campaign.rglob("run_identity.json")]
    assert identities and {i["device"] for i in identities} == {"2"}


def test_uuid_entries_are_the_runtimes_to_match():
    backend = zl_backend_cuda.plugin.BACKEND
    env = {"CUDA_VISIBLE_DEVICES": "GPU-8932f937,MIG-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0"}
    mask = visibility.read_mask(backend, env)
    assert mask.ids == ("GPU-8932f937", "MIG-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0")
    visibility.check_present(backend, mask, ["0", "1"])  # UUIDs are not indices to check


def test_the_first_variable_set_decides_even_when_it_is_empty():
    backend = zl_backend_rocm.plugin.BACKEND  # HIP_VISIBLE_DEVICES, then CUDA_VISIBLE_DEVICES
    with pytest.raises(NoDeviceError, match="HIP_VISIBLE_DEVICES=' ' hides every rocm device"):
        visibility.read_mask(backend, {"HIP_VISIBLE_DEVICES": " ", "CUDA_VISIBLE_DEVICES": "0"})
    assert visibility.read_mask(backend, {"CUDA_VISIBLE_DEVICES": "3"}).ids == ("3",)
    with pytest.raises(UsageError, match="'GPU-12ab' is not a device index"):
        visibility.read_mask(backend, {"HIP_VISIBLE_DEVICES": "GPU-12ab"})
    assert visibility.read_mask(backend, {}) is None
