"""``zl backends``: what is installed, who registered it, and what failed to load."""

from __future__ import annotations

import importlib.metadata as md
import json
import uuid

import pytest
import zl_core.plugins.host as host_module
from zl_core import PluginHost
from zl_core.cli import main

GOOD = """
from zl_core import Backend, hookimpl

@hookimpl
def zl_backends():
    return [Backend(name="goodacc", aliases=("ga", "good"), visibility_env_keys=("GOOD_VISIBLE",),
                    graph_capture=True, capture_deny=("unique2",), flaggems_vendor="goodvendor",
                    default_switch="GOOD_SWITCH", description="a good accelerator")]
"""


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A host loaded from entry points: one good plugin, one that fails to import."""
    good, broken = (f"zl_cli_test_{kind}_{uuid.uuid4().hex[:8]}" for kind in ("good", "broken"))
    (tmp_path / f"{good}.py").write_text(GOOD)
    (tmp_path / f"{broken}.py").write_text("import zl_vendor_runtime_that_is_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    host = PluginHost.load([md.EntryPoint(name="good", value=good, group="zl"),
                            md.EntryPoint(name="broken", value=broken, group="zl")])
    monkeypatch.setattr(host_module, "_HOST", host)
    return host


def test_json_lists_backends_with_origin_and_capabilities(installed, capsys):
    assert main(["backends", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    (backend,) = listing["backends"]
    assert backend["name"] == "goodacc"
    assert backend["aliases"] == ["ga", "good"]
    assert backend["package"] == "?"  # an entry point built in the test has no distribution
    caps = backend["capabilities"]
    assert caps["graph_capture"] is True
    assert caps["capture_deny"] == ["unique2"]
    assert caps["default_switch"] == "GOOD_SWITCH"
    assert caps["visibility_env_keys"] == ["GOOD_VISIBLE"]
    # A third-party backend written to the field's earlier name (flaggems_vendor=) keeps working.
    assert caps["vendor"] == "goodvendor" and "flaggems_vendor" not in caps


def test_json_reports_the_plugin_that_failed_with_its_reason(installed, capsys):
    main(["backends", "--json"])
    plugins = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    assert plugins["good"]["status"] == "loaded"
    assert plugins["broken"]["status"] == "failed"
    assert plugins["broken"]["reason"] == ("ModuleNotFoundError: No module named "
                                           "'zl_vendor_runtime_that_is_not_there'")


def test_text_listing(installed, capsys):
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "goodacc (aliases: ga, good)" in out
    assert "graph_capture=yes" in out and "capture_deny=unique2" in out and "vendor=goodvendor" in out
    assert "plugins not in use" in out
    assert "broken" in out and "zl_vendor_runtime_that_is_not_there" in out


def test_disabled_plugin_is_listed_as_disabled(tmp_path, monkeypatch, capsys):
    good = f"zl_cli_test_good_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{good}.py").write_text(GOOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ZL_DISABLE_PLUGINS", "good")
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load([md.EntryPoint(name="good", value=good, group="zl")]))
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "no backend is installed" in out
    assert "good [? ?] disabled: listed in ZL_DISABLE_PLUGINS" in out


def test_the_installed_vendor_packages(monkeypatch, capsys):
    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())
    assert main(["backends", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    by_name = {b["name"]: b for b in listing["backends"]}
    assert by_name["musa"]["package"] == "zl-backend-musa"
    assert by_name["musa"]["capabilities"]["vendor"] == "mthreads"
    assert by_name["cuda"]["aliases"] == ["nvidia", "nv"]


def test_misuse_is_one_line_exit_2(installed, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["backends", "--yaml"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


RAISES_FROM_HOOKS = """
import sys
from zl_core import Backend, hookimpl

@hookimpl
def zl_backends():
    return [Backend(name="raisy", visibility_env_keys=("RAISY_VISIBLE",))]

@hookimpl
def zl_enumerate_devices(backend, explicit):
    raise RuntimeError("vendor driver exploded")
"""


def test_a_plugin_whose_device_hook_raises_is_listed_as_broken(tmp_path, monkeypatch, capsys):
    good, raisy = (f"zl_cli_test_{kind}_{uuid.uuid4().hex[:8]}" for kind in ("good", "raisy"))
    (tmp_path / f"{good}.py").write_text(GOOD)
    (tmp_path / f"{raisy}.py").write_text(RAISES_FROM_HOOKS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load(
        [md.EntryPoint(name="good", value=good, group="zl"),
         md.EntryPoint(name="raisy", value=raisy, group="zl")]))
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "goodacc (aliases: ga, good)" in out and "raisy  [? ?]" in out
    assert "raisy [? ?] broken: zl_enumerate_devices raised RuntimeError: vendor driver exploded" in out
