"""``zl doctor``: each problem named, exit 0 when usable and 2 when not; a broken torch
is probed in a child process and never takes zl down."""

from __future__ import annotations

import importlib.metadata as md
import sys

import zl_core.plugins.host as host_module
from fake_tools import path_with, write_tool
from own_processes import holding
from zl_core import Backend, PluginHost, hookimpl
from zl_core.cli import main


class Doc:
    """A vendor whose torch namespace is ``torch.docdev``; devices from its own tool."""

    def __init__(self, devices=("0", "1"), sampler="docdev-smi"):
        self.devices = devices
        self.sampler = sampler

    @hookimpl
    def zl_backends(self):
        return [Backend(name="docdev", aliases=("dd",), visibility_env_keys=("DOCDEV_VISIBLE",),
                        torch_namespace="docdev")]

    @hookimpl
    def zl_enumerate_devices(self, backend):
        if backend.name != "docdev":
            return None
        return list(self.devices) if self.devices else None

    @hookimpl
    def zl_telemetry_command(self, backend):
        return [self.sampler] if backend.name == "docdev" and self.sampler else None


def _install(monkeypatch, *plugins):
    host = PluginHost()
    for i, plugin in enumerate(plugins):
        host.register(plugin, name=f"doc{i}", package="zl-backend-docdev", version="9.9")
    monkeypatch.setattr(host_module, "_HOST", host)
    monkeypatch.delenv("ZL_BACKEND", raising=False)
    monkeypatch.delenv("DOCDEV_VISIBLE", raising=False)
    return host


def _site(tmp_path, monkeypatch, torch_body: str, triton_body: str = "__version__ = '3.6.0'\n"):
    """Fake torch/triton packages first on the child's import path."""
    site = tmp_path / "site"
    for name, body in (("torch", torch_body), ("triton", triton_body)):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", str(site))


GOOD_TORCH = """
__version__ = "2.9.0+fake"
class _DocDev:
    @staticmethod
    def device_count():
        return 2
docdev = _DocDev()
"""


def _lines(out: str) -> dict[str, str]:
    """check name -> status, from doctor's output."""
    checks = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "note", "problem"):
            checks[parts[1]] = parts[0]
    return checks


def test_usable_machine_exits_0(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "docdev-smi", "")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    assert main(["doctor"]) == 0  # the only backend installed is used
    out = capsys.readouterr().out
    assert _lines(out) == {"backend": "ok", "interpreter": "ok", "torch": "ok", "triton": "ok",
                           "devices": "ok", "sampler": "ok"}
    assert "docdev (zl-backend-docdev 9.9)" in out
    assert sys.executable in out
    assert "torch 2.9.0+fake" in out and "triton 3.6.0" in out
    assert "2 found: 0, 1 (torch.docdev sees 2)" in out
    assert out.rstrip().endswith("usable: timed cells, telemetry")
    # This host has no suite that compiles without a device: the IR-only screen says what it lacks.
    assert "no   IR-only screen  missing a suite that compiles without a device" in out


def test_missing_torch_and_devices_are_named_exit_2(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc(devices=(), sampler=None))
    _site(tmp_path, monkeypatch, "raise ImportError('libtorch_cuda.so: cannot open shared object file')\n")
    assert main(["doctor", "--backend", "dd"]) == 2
    out = capsys.readouterr().out
    checks = _lines(out)
    assert checks["torch"] == "problem" and checks["devices"] == "problem"
    assert checks["triton"] == "ok" and checks["sampler"] == "note"
    assert "libtorch_cuda.so" in out
    assert ("not usable: neither the IR-only screen nor timed cells can run "
            "(2 problem(s): torch, devices)") in out


def test_a_torch_that_kills_its_process_is_a_problem_not_a_crash(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())
    _site(tmp_path, monkeypatch, "import os\nos._exit(139)\n")
    assert main(["doctor"]) == 2
    out = capsys.readouterr().out
    assert "problem  torch" in out and "import probe died (exit 139)" in out
    assert "ok       devices" in out  # still found through the vendor tool
    # The in-process torch block is lifted again afterwards.
    assert sys.modules.get("torch", "absent") is not None


def test_a_missing_sampler_is_only_a_note(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["doctor"]) == 0
    assert "note     sampler      docdev-smi is not on PATH" in capsys.readouterr().out


def test_unknown_backend_is_a_named_problem(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    assert main(["doctor", "--backend", "cuda"]) == 2
    out = capsys.readouterr().out
    assert "problem  backend" in out and "unknown backend 'cuda'" in out and "docdev (aliases: dd)" in out


def test_several_backends_and_no_choice_asks_for_one(tmp_path, monkeypatch, capsys):
    class Other:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="otherdev")]

    _install(monkeypatch, Doc(devices=()), Other())
    _site(tmp_path, monkeypatch, GOOD_TORCH.replace("return 2", "return 0"))
    assert main(["doctor"]) == 2
    out = capsys.readouterr().out
    # No backend finds a device: say so, and how to go on without one.
    assert "no device found by any installed backend" in out and "--backend" in out
    assert "--compile-only" in out


def test_several_backends_with_devices_asks_for_one(tmp_path, monkeypatch, capsys):
    class Other:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="otherdev")]

        @hookimpl
        def zl_enumerate_devices(self, backend, explicit):
            return ["0"] if backend.name == "otherdev" else None

    _install(monkeypatch, Doc(devices=("0",)), Other())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    assert main(["doctor"]) == 2
    out = capsys.readouterr().out
    assert "several backends are installed" in out and "--backend" in out


def test_zl_backend_env_picks_the_backend(tmp_path, monkeypatch, capsys):
    class Other:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="otherdev")]

    _install(monkeypatch, Doc(), Other())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    monkeypatch.setenv("ZL_BACKEND", "dd")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["doctor"]) == 0
    assert "ok       backend      docdev" in capsys.readouterr().out


def test_failed_plugins_are_noted(tmp_path, monkeypatch, capsys):
    (tmp_path / "zl_doctor_broken_mod.py").write_text("raise OSError('libmusa.so.2: not found')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    host = PluginHost.load([md.EntryPoint(name="brokenvendor", value="zl_doctor_broken_mod", group="zl")])
    host.register(Doc(), name="doc", package="zl-backend-docdev", version="9.9")
    monkeypatch.setattr(host_module, "_HOST", host)
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["doctor"]) == 0
    assert "note     plugin" in capsys.readouterr().out


def test_a_missing_interpreter_is_named(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())
    assert main(["doctor", "--python", str(tmp_path / "no-python")]) == 2
    out = capsys.readouterr().out
    assert "problem  interpreter" in out and "pass --python PATH" in out


def test_devices_torch_cannot_see_are_a_problem(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())  # the vendor tool lists 0 and 1
    _site(tmp_path, monkeypatch, GOOD_TORCH.replace("return 2", "return 0"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["doctor"]) == 2
    out = capsys.readouterr().out
    assert "problem  devices" in out and "torch.docdev sees 0" in out


def test_a_machine_without_device_is_usable_for_the_ir_only_screen(tmp_path, monkeypatch, capsys):
    """The installed packages, real triton, no accelerator: never "not usable"."""
    import pytest

    pytest.importorskip("triton")
    monkeypatch.delenv("ZL_BACKEND", raising=False)
    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    for key in ("CUDA_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                "ROCR_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no vendor tool: no device anywhere
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "note     backend      no device found by any installed backend" in out
    assert "yes  IR-only screen  zl screen --compile-only" in out
    assert "no   timed cells     missing backend (no device found" in out
    assert "would add: latencies, A/B rounds and their verdicts" in out
    assert "no   telemetry       needs timed cells first" in out
    assert out.rstrip().endswith("usable: IR-only screen") and "not usable" not in out


def test_a_sampler_that_fails_is_a_problem_named_with_its_own_words(tmp_path, monkeypatch, capsys):
    _install(monkeypatch, Doc())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "docdev-smi", rc=9, stderr="NVIDIA-SMI has failed because it couldn't "
               "communicate with the NVIDIA driver.")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    assert main(["doctor"]) == 0  # timed cells still run; the telemetry would not
    out = capsys.readouterr().out
    assert ("problem  sampler      docdev-smi exited 9: NVIDIA-SMI has failed because it couldn't "
            "communicate with the NVIDIA driver.; campaigns would run without telemetry") in out
    assert out.rstrip().endswith("usable: timed cells")


def test_a_sampler_that_hangs_is_given_up_on_and_killed(tmp_path, monkeypatch, capsys):

    from zl_core.app import doctor

    _install(monkeypatch, Doc())
    _site(tmp_path, monkeypatch, GOOD_TORCH)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "docdev-smi"
    tool.write_text("#!/bin/sh\nexec sleep 301.5\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", path_with(bin_dir))
    monkeypatch.setattr(doctor, "SAMPLER_PROBE_S", 1.0)
    # Waiting for the sampler instead would take its 301.5 s and never print this line.
    assert main(["doctor"]) == 0
    assert "problem  sampler      docdev-smi did not answer within 1s" in capsys.readouterr().out
    assert holding(bin_dir) == []  # killed, not left behind (its PATH names bin_dir)
