"""The plugin host: registration, names and aliases, entry-point loading, disabling."""

from __future__ import annotations

import importlib.metadata as md
import uuid

import pytest
from zl_core import Backend, PluginHost, hookimpl
from zl_core.foundation.errors import UnknownBackendError


class Accel:
    """An in-test vendor plugin answering for its own backend only."""

    def __init__(self, name="accel", aliases=("acc",), keys=("ACCEL_VISIBLE_DEVICES",)):
        self.backend = Backend(name=name, aliases=aliases, visibility_env_keys=keys)

    @hookimpl
    def zl_backends(self):
        return [self.backend]


def _host(*plugins):
    host = PluginHost()
    for i, plugin in enumerate(plugins):
        host.register(plugin, name=f"p{i}", package=f"pkg-{i}", version="1.0")
    return host


def test_registered_backend_is_listed_with_its_origin():
    host = _host(Accel())
    (backend,) = host.backends()
    assert backend.name == "accel"
    origin = host.backend_origin(backend)
    assert (origin.package, origin.version, origin.plugin) == ("pkg-0", "1.0", "p0")


def test_unregister_removes_the_backend():
    host = _host(Accel())
    host.unregister("p0")
    assert host.backends() == []


def test_aliases_resolve_case_insensitively_to_the_canonical_backend():
    host = _host(Accel(), Accel(name="other", aliases=("oth", "o2"), keys=("OTHER_VISIBLE",)))
    assert host.get_backend("ACC").name == "accel"
    assert host.get_backend(" o2 ").name == "other"
    assert host.get_backend("Other").name == "other"


def test_unknown_backend_fails_closed_listing_every_name_and_alias():
    host = _host(Accel(), Accel(name="other", aliases=("oth",), keys=("OTHER_VISIBLE",)))
    with pytest.raises(UnknownBackendError) as info:
        host.get_backend("cuda")  # no silent CUDA fallback
    message = str(info.value)
    assert "'cuda'" in message
    for name in ("accel", "acc", "other", "oth"):
        assert name in message
    assert "\n" not in message


def test_unknown_backend_with_nothing_installed_says_so():
    with pytest.raises(UnknownBackendError, match="none are installed"):
        PluginHost().get_backend("musa")


def test_later_registration_overrides_a_backend_and_says_so():
    host = _host(Accel(aliases=("old",)), Accel(aliases=("new",)))
    assert host.get_backend("accel").aliases == ("new",)
    assert any("overrides" in p for p in host.problems)


# -- entry points ----------------------------------------------------------------


def _module(tmp_path, monkeypatch, body: str) -> str:
    """Write an importable module and return its (unique) name."""
    name = f"zl_test_plugin_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


GOOD_PLUGIN = """
from zl_core import Backend, hookimpl

@hookimpl
def zl_backends():
    return [Backend(name="goodacc", aliases=("ga",), visibility_env_keys=("GOOD_VISIBLE",))]
"""


def _ep(name: str, module: str) -> md.EntryPoint:
    return md.EntryPoint(name=name, value=module, group="zl")


def test_a_plugin_that_fails_to_import_is_reported_and_the_others_load(tmp_path, monkeypatch):
    good = _module(tmp_path, monkeypatch, GOOD_PLUGIN)
    broken = _module(tmp_path, monkeypatch, "raise ImportError('libvendor.so: cannot open shared object file')\n")
    host = PluginHost.load([_ep("broken", broken), _ep("good", good)])

    assert [b.name for b in host.backends()] == ["goodacc"]
    records = {r.name: r for r in host.plugins}
    assert records["good"].status == "loaded"
    assert records["broken"].status == "failed"
    assert records["broken"].reason == "ImportError: libvendor.so: cannot open shared object file"


def test_an_entry_point_naming_a_missing_module_is_reported(tmp_path, monkeypatch):
    good = _module(tmp_path, monkeypatch, GOOD_PLUGIN)
    host = PluginHost.load([_ep("ghost", "zl_no_such_module_anywhere"), _ep("good", good)])
    assert host.get_backend("ga").name == "goodacc"
    (ghost,) = [r for r in host.plugins if r.name == "ghost"]
    assert ghost.status == "failed"
    assert "ModuleNotFoundError" in ghost.reason


def test_a_plugin_whose_hook_raises_is_reported_and_the_others_still_list(tmp_path, monkeypatch):
    good = _module(tmp_path, monkeypatch, GOOD_PLUGIN)
    raising = _module(tmp_path, monkeypatch, (
        "from zl_core import hookimpl\n"
        "@hookimpl\n"
        "def zl_backends():\n"
        "    raise RuntimeError('driver not loaded')\n"))
    host = PluginHost.load([_ep("raising", raising), _ep("good", good)])
    assert [b.name for b in host.backends()] == ["goodacc"]
    assert any("driver not loaded" in p for p in host.problems)


def test_zl_disable_plugins_skips_by_entry_point_name(tmp_path, monkeypatch):
    good = _module(tmp_path, monkeypatch, GOOD_PLUGIN)
    other = _module(tmp_path, monkeypatch, GOOD_PLUGIN.replace("goodacc", "otheracc").replace('"ga"', '"oa"'))
    monkeypatch.setenv("ZL_DISABLE_PLUGINS", " Good , unrelated")
    host = PluginHost.load([_ep("good", good), _ep("other", other)])
    assert [b.name for b in host.backends()] == ["otheracc"]
    (record,) = [r for r in host.plugins if r.name == "good"]
    assert record.status == "disabled"
    assert "ZL_DISABLE_PLUGINS" in record.reason


def test_installed_vendor_packages_register_through_their_entry_points():
    host = PluginHost.load()
    names = {b.name for b in host.backends()}
    assert {"cuda", "musa", "rocm", "ascend"} <= names
    for name in ("cuda", "musa", "rocm", "ascend"):
        origin = host.backend_origin(host.get_backend(name))
        assert (origin.package, origin.version) == (f"zl-backend-{name}", "0.1.0")


# -- isolation: nothing a plugin raises takes zl or the other plugins down -----------


@pytest.mark.parametrize("statement, reason", [
    ("import sys; sys.exit(7)", "SystemExit: 7"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("raise SystemExit", "SystemExit"),
    ("raise MemoryError('vendor runtime')", "MemoryError: vendor runtime"),
])
def test_anything_raised_at_import_is_that_plugins_failure(statement, reason, tmp_path, monkeypatch):
    good = _module(tmp_path, monkeypatch, GOOD_PLUGIN)
    bad = _module(tmp_path, monkeypatch, statement + "\n")
    host = PluginHost.load([_ep("bad", bad), _ep("good", good)])
    assert [b.name for b in host.backends()] == ["goodacc"]
    records = {r.name: r for r in host.plugins}
    assert (records["bad"].status, records["bad"].reason) == ("failed", reason)
    assert records["good"].status == "loaded"


RAISING_HOOKS = """
import sys
from zl_core import Backend, hookimpl

@hookimpl
def zl_backends():
    return [Backend(name="raisy", visibility_env_keys=("RAISY_VISIBLE",))]

@hookimpl
def zl_enumerate_devices(backend, explicit):
    {raise_}

@hookimpl
def zl_device_identity(backend, device):
    {raise_}

@hookimpl
def zl_classify_capture_error(backend, exc):
    {raise_}

@hookimpl
def zl_telemetry_command(backend, device):
    {raise_}

@hookimpl
def zl_parse_telemetry(backend, raw):
    {raise_}

@hookimpl
def zl_compat_plugins(backend):
    {raise_}

@hookimpl
def zl_providers():
    {raise_}
"""

ANSWERING = """
from zl_core import Backend, hookimpl

@hookimpl
def zl_backends():
    return [Backend(name="goodacc", visibility_env_keys=("GOOD_VISIBLE",))]

@hookimpl
def zl_enumerate_devices(backend, explicit):
    return ["0", "1"] if backend.name == "goodacc" else None

@hookimpl
def zl_telemetry_command(backend, device):
    return ["good-smi", "--query"] if backend.name == "goodacc" else None

@hookimpl
def zl_compat_plugins(backend):
    return ["good_compat"]
"""


@pytest.mark.parametrize("raise_", ["sys.exit(7)", "raise RuntimeError('driver not loaded')",
                                    "raise KeyboardInterrupt"])
def test_a_plugin_whose_hooks_raise_is_marked_broken_and_the_others_answer(raise_, tmp_path, monkeypatch):
    raisy = _module(tmp_path, monkeypatch, RAISING_HOOKS.replace("{raise_}", raise_))
    good = _module(tmp_path, monkeypatch, ANSWERING)
    # "raisy" loads last, so pluggy asks it first: its failure must not hide "good"'s answer.
    host = PluginHost.load([_ep("good", good), _ep("raisy", raisy)])
    good_backend, raisy_backend = host.get_backend("goodacc"), host.get_backend("raisy")
    assert host.probe_devices(good_backend) == ["0", "1"]
    assert host.enumerate_devices(good_backend) == ["0", "1"]
    assert host.enumerate_devices(raisy_backend) == []
    assert host.device_identity(raisy_backend) == {}
    assert host.classify_capture_error(raisy_backend, RuntimeError("x")) == "recoverable"
    assert host.telemetry_command(good_backend) == ["good-smi", "--query"]
    assert host.parse_telemetry(raisy_backend, "") == []
    assert host.compat_plugins(good_backend) == ["good_compat"]
    assert set(host.providers()) == set()
    records = {r.name: r for r in host.plugins}
    assert records["raisy"].status == "broken" and records["good"].status == "loaded"
    assert records["raisy"].reason.startswith("zl_enumerate_devices raised")
    assert any(p.startswith("plugin raisy: zl_parse_telemetry raised") for p in host.problems)


def test_a_malformed_answer_is_that_plugins_fault_and_the_next_plugin_is_asked(tmp_path, monkeypatch):
    good = _module(tmp_path, monkeypatch, ANSWERING)
    odd = _module(tmp_path, monkeypatch, (
        "from zl_core import hookimpl\n"
        "@hookimpl\n"
        "def zl_enumerate_devices(backend, explicit):\n"
        "    return 42\n"))
    host = PluginHost.load([_ep("good", good), _ep("odd", odd)])
    assert host.probe_devices(host.get_backend("goodacc")) == ["0", "1"]
    (record,) = [r for r in host.plugins if r.name == "odd"]
    assert record.status == "broken" and "returned int" in record.reason


def test_health_check_finds_a_hook_that_raises_before_any_command_needs_it(tmp_path, monkeypatch):
    raisy = _module(tmp_path, monkeypatch, RAISING_HOOKS.replace("{raise_}", "1 / 0"))
    host = PluginHost.load([_ep("raisy", raisy)])
    assert {r.status for r in host.plugins} == {"loaded"}
    problems = host.health()
    assert {r.status for r in host.plugins} == {"broken"}
    assert any("zl_enumerate_devices raised ZeroDivisionError" in p for p in problems)


def test_a_plugin_that_hangs_in_its_import_or_a_hook_is_abandoned_named_and_skipped(tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("ZL_PLUGIN_TIMEOUT", "0.5")
    stuck_import = _module(tmp_path, monkeypatch, "import time\ntime.sleep(60)\n")
    stuck_hooks = _module(tmp_path, monkeypatch, RAISING_HOOKS.replace("{raise_}", "time.sleep(60)")
                          .replace("import sys", "import sys, time"))
    good = _module(tmp_path, monkeypatch, ANSWERING)
    started = time.monotonic()
    host = PluginHost.load([_ep("good", good), _ep("stuck", stuck_hooks), _ep("frozen", stuck_import)])
    records = {r.name: r for r in host.plugins}
    assert records["frozen"].status == "failed"
    assert records["frozen"].reason.startswith("its import did not finish within 0.5s")
    good_backend = host.get_backend("goodacc")
    assert host.enumerate_devices(good_backend) == ["0", "1"]  # the stuck plugin is asked first
    assert time.monotonic() - started < 10
    records = {r.name: r for r in host.plugins}
    assert records["stuck"].status == "broken"
    assert "zl_enumerate_devices did not finish within 0.5s" in records["stuck"].reason
    assert any("plugin stuck: zl_enumerate_devices did not finish" in p for p in host.problems)


def test_a_provider_written_to_the_first_api_keeps_working(tmp_path):
    """API 1 had no host argument in preflight and cell_command; such a provider's cells run."""
    import sys
    from pathlib import Path

    from zl_core import Backend, PluginHost, hookimpl
    from zl_core.cells.cell import run_cell
    from zl_core.interface.opspec import OpSpec
    from zl_core.interface.provider import API_VERSION, CellCommand, CellRequest, OpInfo, Provider

    seen = []

    class OldProvider(Provider):
        name = "old"

        def list_ops(self, source):
            return [OpInfo(op="add", op_file="add")]

        def preflight(self, request):  # API 1
            seen.append("preflight")

        def cell_command(self, request):  # API 1
            seen.append("cell_command")
            return CellCommand(argv=(sys.executable, "-c", "print('old provider cell')"),
                               cwd=Path(request.out_dir))

    class OldVendor:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="oldgpu", visibility_env_keys=("OLD_VISIBLE",))]

        @hookimpl
        def zl_enumerate_devices(self, backend, explicit):
            return ["0"] if backend.name == "oldgpu" else None

        @hookimpl
        def zl_providers(self):
            return [OldProvider()]

    host = PluginHost()
    host.register(OldVendor(), name="oldvendor", package="tests", version="0")
    provider = host.get_provider("old")
    request = CellRequest(op=OpSpec.parse("add"), backend=host.get_backend("oldgpu"), device="0",
                          out_dir=tmp_path / "cell", python=sys.executable)
    outcome = run_cell(host, provider, request)
    assert API_VERSION == 2 and seen == ["preflight", "cell_command"]
    assert outcome.rc == 0 and "old provider cell" in (tmp_path / "cell" / "run.log").read_text()


def test_answers_for_keeps_a_vendor_hook_to_its_own_backend():
    from zl_core import Backend, PluginHost, hookimpl
    from zl_core.foundation.vendor_tools import answers_for

    mine, other = Backend(name="minegpu"), Backend(name="othergpu")
    ran = []

    class Vendor:
        @hookimpl
        def zl_backends(self):
            return [mine, other]

        @hookimpl
        @answers_for(mine)
        def zl_device_identity(backend, device):  # no self: answers_for guards plain functions too
            ran.append(backend.name)
            return {"device_name": f"{backend.name}:{device}"}

    Vendor.zl_device_identity = staticmethod(Vendor.__dict__["zl_device_identity"])
    host = PluginHost()
    host.register(Vendor(), name="vendor", package="tests", version="0")
    assert host.device_identity(mine, "3") == {"device_name": "minegpu:3"}
    assert host.device_identity(other, "3") == {} and ran == ["minegpu"]  # the body never ran
    assert host.problems == []
