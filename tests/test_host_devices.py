"""The host's device-side behaviour: visibility, device lists, capture classification,
over the four real vendor plugins registered side by side."""

from __future__ import annotations

import sys

import pytest
import zl_backend_ascend.plugin
import zl_backend_cuda.plugin
import zl_backend_musa.plugin
import zl_backend_rocm.plugin
from zl_core import Backend, PluginHost, hookimpl
from zl_core.foundation.errors import NoDeviceError

VENDORS = {"cuda": zl_backend_cuda.plugin, "musa": zl_backend_musa.plugin,
           "rocm": zl_backend_rocm.plugin, "ascend": zl_backend_ascend.plugin}
ALL_KEYS = {"CUDA_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
            "ASCEND_RT_VISIBLE_DEVICES"}


@pytest.fixture
def host():
    host = PluginHost()
    for name, module in VENDORS.items():
        host.register(module, name=name, package=f"zl-backend-{name}", version="0.1.0")
    return host


def _parent_env():
    env = {key: "5,6" for key in ALL_KEYS}
    env.update(PATH="/usr/bin", ROCR_VISIBLE_DEVICES="2,3", ASCEND_VISIBLE_DEVICES="0-7")
    return env


@pytest.mark.parametrize("name", sorted(VENDORS))
def test_apply_visibility_keeps_no_other_vendors_key(host, name):
    backend = host.get_backend(name)
    env = host.apply_visibility(backend, _parent_env(), "1")
    own = set(backend.visibility_env_keys)
    for key in ALL_KEYS - own:
        assert key not in env, f"{key} leaked into a {name} cell"
    for key in own:
        assert env[key] == "1"
    assert env["PATH"] == "/usr/bin"


def test_every_vendors_keys_are_known_to_the_host(host):
    declared = {k for b in host.backends() for k in b.visibility_env_keys}
    assert declared == ALL_KEYS


def test_rocm_writes_hip_and_cuda_and_keeps_the_outer_rocr_mask(host):
    env = host.apply_visibility(host.get_backend("amd"), _parent_env(), "1")
    # One index into both layers would select nothing; ROCr's mask stays outer.
    assert env["HIP_VISIBLE_DEVICES"] == env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["ROCR_VISIBLE_DEVICES"] == "2,3"


def test_cuda_cell_keeps_cuda_key_that_rocm_also_declares(host):
    env = host.apply_visibility(host.get_backend("cuda"), _parent_env(), "4")
    assert env["CUDA_VISIBLE_DEVICES"] == "4"
    assert "HIP_VISIBLE_DEVICES" not in env


def test_no_device_clears_foreign_keys_and_leaves_own_alone(host):
    env = host.apply_visibility(host.get_backend("musa"), _parent_env(), None)
    assert env["MUSA_VISIBLE_DEVICES"] == "5,6"
    assert "CUDA_VISIBLE_DEVICES" not in env


# -- enumerate_devices precedence ---------------------------------------------------


class Probe:
    """A vendor whose own tool reports devices 0..3."""

    backend = Backend(name="probeacc", visibility_env_keys=("PROBE_VISIBLE", "PROBE_ALT"),
                      torch_namespace="probeacc")

    def __init__(self, answer=("0", "1", "2", "3")):
        self.answer = answer

    @hookimpl
    def zl_backends(self):
        return [self.backend]

    @hookimpl
    def zl_enumerate_devices(self, backend):
        return list(self.answer) if backend.name == "probeacc" and self.answer else None


def _probe_host(answer=("0", "1", "2", "3")):
    host = PluginHost()
    host.register(Probe(answer), name="probe")
    return host, Probe.backend


def test_explicit_devices_win(monkeypatch):
    monkeypatch.setenv("PROBE_VISIBLE", "4,5")
    host, backend = _probe_host()
    assert host.enumerate_devices(backend, ["7", " 2 "]) == ["7", "2"]


def test_visibility_variable_wins_over_the_vendor_tool_with_physical_ids(monkeypatch):
    monkeypatch.delenv("PROBE_VISIBLE", raising=False)
    monkeypatch.setenv("PROBE_ALT", "4,6,7")
    host, backend = _probe_host(answer=tuple(str(i) for i in range(8)))
    # Devices are named as the user sees them: renumbering to 0,1,2 would make a cell
    # pinned to "0" run on physical device 0, outside the user's mask.
    assert host.enumerate_devices(backend) == ["4", "6", "7"]


def test_a_mask_index_the_vendor_tool_does_not_list_is_refused(monkeypatch):
    monkeypatch.delenv("PROBE_VISIBLE", raising=False)
    monkeypatch.setenv("PROBE_ALT", "2,6")
    host, backend = _probe_host()  # its tool lists 0..3
    with pytest.raises(NoDeviceError, match="PROBE_ALT=2,6 names probeacc device 6, which this "
                                            "machine does not have"):
        host.enumerate_devices(backend)


def test_vendor_tool_answers_when_nothing_is_pinned(monkeypatch):
    monkeypatch.delenv("PROBE_VISIBLE", raising=False)
    monkeypatch.delenv("PROBE_ALT", raising=False)
    host, backend = _probe_host()
    assert host.enumerate_devices(backend) == ["0", "1", "2", "3"]


def test_without_tool_or_torch_there_are_no_devices(monkeypatch):
    monkeypatch.delenv("PROBE_VISIBLE", raising=False)
    monkeypatch.delenv("PROBE_ALT", raising=False)
    monkeypatch.setitem(sys.modules, "torch", None)  # no torch either
    host, backend = _probe_host(answer=())
    assert host.enumerate_devices(backend) == []


def test_rocm_counts_devices_inside_an_outer_rocr_mask(host, monkeypatch):
    for key in ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ROCR_VISIBLE_DEVICES", "4,5")
    assert host.enumerate_devices(host.get_backend("rocm")) == ["0", "1"]


# -- capture classification --------------------------------------------------------


def test_classification_defaults_to_recoverable_when_no_plugin_knows():
    host, backend = _probe_host()
    assert host.classify_capture_error(backend, RuntimeError("something odd")) == "recoverable"


def test_vendor_wording_never_classifies_another_vendors_error(host):
    musa_poison = RuntimeError("MUSA error: unknown error")
    assert host.classify_capture_error(host.get_backend("musa"), musa_poison) == "poisoned"
    for other in ("cuda", "rocm", "ascend"):
        assert host.classify_capture_error(host.get_backend(other), musa_poison) == "recoverable"


def test_an_unknown_class_from_a_plugin_reads_as_recoverable():
    class Odd(Probe):
        @hookimpl
        def zl_classify_capture_error(self, backend, exc):
            return "catastrophic"

    host = PluginHost()
    host.register(Odd(), name="odd")
    assert host.classify_capture_error(Probe.backend, RuntimeError("x")) == "recoverable"


class Named:
    """A vendor whose tool lists devices 0..3 and remembers what it was asked about."""

    backend = Backend(name="namedacc", visibility_env_keys=("NAMED_VISIBLE",))

    def __init__(self):
        self.asked = []

    @hookimpl
    def zl_backends(self):
        return [self.backend]

    @hookimpl
    def zl_enumerate_devices(self, backend, explicit):
        if backend.name != "namedacc":
            return None
        self.asked.append(explicit)
        return ["0", "1", "2", "3"]


def test_named_devices_reach_the_vendor_tool_and_unknown_ones_are_refused(monkeypatch):
    from zl_core.foundation.errors import NoDeviceError

    monkeypatch.delenv("NAMED_VISIBLE", raising=False)
    host, vendor = PluginHost(), Named()
    host.register(vendor, name="named")
    assert host.enumerate_devices(vendor.backend, [" 3", "1"]) == ["3", "1"]
    assert vendor.asked == [["3", "1"]]
    with pytest.raises(NoDeviceError, match=r"no namedacc device 9 on this machine \(its tool lists "
                                            r"0, 1, 2, 3\)"):
        host.enumerate_devices(vendor.backend, ["1", "9"])
    monkeypatch.setenv("NAMED_VISIBLE", "9")  # under a mask the mask says what exists
    assert host.enumerate_devices(vendor.backend, ["9"]) == ["9"]
