"""The FlagGems provider: op listing, named preflight checks, the cell command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fake_flaggems
import pytest
from zl_core import Backend
from zl_core.foundation.errors import PreflightError
from zl_core.interface import contract
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest
from zl_flaggems.common import plugin_order
from zl_flaggems.host.checkout import provider_commit
from zl_flaggems.host.provider import FlagGemsProvider

BACKEND = Backend(name="fakegpu", flaggems_vendor="fakevendor", graph_capture=True)


def request(root: Path | None, spec: str = "fakeadd:fake", **kw) -> CellRequest:
    values = {"op": OpSpec.parse(spec), "backend": BACKEND, "out_dir": Path("/tmp/unused"),
              "python": sys.executable, "source": str(root) if root else None}
    values.update(kw)
    return CellRequest(**values)


@pytest.fixture
def fg(tmp_path, fake_host, monkeypatch) -> Path:
    root = fake_flaggems.build(tmp_path / "FlagGems")
    # the interpreter probe must find torch; this machine may have none
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root / "stubs"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]))
    return root


def check_of(provider: FlagGemsProvider, req: CellRequest) -> PreflightError:
    with pytest.raises(PreflightError) as info:
        provider.preflight(req)
    return info.value


# -- list_ops ------------------------------------------------------------------------


def test_list_ops_scans_module_level_test_functions(fg):
    (fg / "benchmark" / "test_sort.py").write_text(
        "def test_perf_sort():\n    pass\n\nclass TestX:\n    def test_method(self):\n        pass\n"
        "def helper():\n    pass\n")
    ops = FlagGemsProvider().list_ops(str(fg))
    pairs = {(o.op, o.op_file) for o in ops}
    assert ("perf_sort", "sort") in pairs
    assert ("fakeadd", "fake") in pairs and ("zafter", "fake") in pairs
    assert not any(o.op in ("method", "helper") for o in ops)  # methods need Class:: nodes
    assert [o.op for o in ops] == sorted(o.op for o in ops)


def test_list_ops_without_source_is_empty(monkeypatch):
    monkeypatch.delenv("FLAGGEMS_DIR", raising=False)
    assert FlagGemsProvider().list_ops(None) == []


# -- preflight -----------------------------------------------------------------------


def test_preflight_passes_on_a_complete_tree(fg):
    FlagGemsProvider().preflight(request(fg))  # includes the real interpreter probe


def test_flaggems_dir_checks(tmp_path, fake_host, monkeypatch):
    monkeypatch.delenv("FLAGGEMS_DIR", raising=False)
    provider = FlagGemsProvider()
    assert check_of(provider, request(None)).check == "flaggems_dir"
    assert check_of(provider, request(tmp_path / "nope")).check == "flaggems_dir"
    (tmp_path / "half" / "benchmark").mkdir(parents=True)
    err = check_of(provider, request(tmp_path / "half"))
    assert err.check == "flaggems_dir" and "src/flag_gems" in err.detail


def test_benchmark_file_check_suggests_close_files(fg):
    err = check_of(FlagGemsProvider(), request(fg, "fakeadd:fak"))
    assert err.check == "benchmark_file"
    assert "test_fak.py" in err.detail and "fake" in err.detail


def test_benchmark_file_check_on_test_node_file_half(fg):
    err = check_of(FlagGemsProvider(), request(fg, test_node="benchmark/test_gone.py::test_x"))
    assert err.check == "benchmark_file" and "test_gone.py" in err.detail
    err = check_of(FlagGemsProvider(), request(fg, test_node="--co"))
    assert err.check == "benchmark_file"


def test_test_function_check_names_close_and_defining_files(fg):
    (fg / "benchmark" / "test_sort.py").write_text("def test_perf_sort():\n    pass\n")
    provider = FlagGemsProvider()
    err = check_of(provider, request(fg, "fakead:fake"))
    assert err.check == "test_function" and "fakeadd" in err.detail
    err = check_of(provider, request(fg, "perf_sort:fake"))
    assert err.check == "test_function" and "perf_sort:sort" in err.detail
    err = check_of(provider, request(fg, test_node="benchmark/test_fake.py::test_nothing"))
    assert err.check == "test_function"


def test_shape_file_check(fg, tmp_path):
    provider = FlagGemsProvider()
    err = check_of(provider, request(fg, shape_file=tmp_path / "missing.yaml"))
    assert err.check == "shape_file"
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n")
    assert check_of(provider, request(fg, shape_file=bad)).check == "shape_file"
    notmap = tmp_path / "list.yaml"
    notmap.write_text("- 1\n- 2\n")
    assert check_of(provider, request(fg, shape_file=notmap)).check == "shape_file"
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("mm:\n  shapes: 12\n")
    assert check_of(provider, request(fg, shape_file=wrong)).check == "shape_file"
    # --shapes upstream ignores the file altogether
    provider.preflight(request(fg, shape_file=tmp_path / "missing.yaml", shapes="upstream"))


def test_replay_dir_check(fg, tmp_path):
    provider = FlagGemsProvider()
    err = check_of(provider, request(fg, autotune_mode="replay"))
    assert err.check == "replay_dir"
    assert check_of(provider, request(fg, autotune_mode="replay",
                                      replay_from=tmp_path / "nocell")).check == "replay_dir"
    cell = tmp_path / "cellA"
    (cell / "autotune_records").mkdir(parents=True)
    err = check_of(provider, request(fg, autotune_mode="replay", replay_from=cell))
    assert err.check == "replay_dir" and "meta.json" in err.detail
    (cell / "autotune_records" / "meta.json").write_text("{}")
    provider.preflight(request(fg, autotune_mode="replay", replay_from=cell))


def test_interpreter_check_names_what_the_python_cannot_find(fg, monkeypatch):
    import importlib.util
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("this interpreter has torch; the check needs one without it")
    monkeypatch.setenv("PYTHONPATH", "")  # drop the torch stand-in
    err = check_of(FlagGemsProvider(), request(fg))
    assert err.check == "interpreter"
    assert sys.executable in err.detail and "cannot import torch" in err.detail


def test_interpreter_check_only_looks_modules_up(fg):
    # Importing torch + flag_gems costs seconds per campaign: the probe finds them and
    # leaves import errors to the cell's log.
    (fg / "src" / "flag_gems" / "__init__.py").write_text("raise ImportError('libfoo.so')\n")
    FlagGemsProvider().preflight(request(fg))


def test_interpreter_check_missing_python(fg):
    err = check_of(FlagGemsProvider(), request(fg, python="/nonexistent/python3"))
    assert err.check == "interpreter" and "/nonexistent/python3" in err.detail


def test_interpreter_check_missing_plugins(fg, monkeypatch):
    real = plugin_order.plan

    def plan_with_missing(*a, **kw):
        p = real(*a, **kw)
        return plugin_order.PluginPlan(modules=(*p.modules, "zl_no_such_plugin.mod"), timer=p.timer)

    monkeypatch.setattr(plugin_order, "plan", plan_with_missing)
    err = check_of(FlagGemsProvider(), request(fg))
    assert err.check == "interpreter" and "zl_no_such_plugin.mod" in err.detail


def test_interpreter_check_names_why_a_plugin_could_not_be_looked_up(fg, monkeypatch):
    # A plugin whose package fails to import is missing for a reason: the detail keeps it.
    (fg / "zl_broken_pkg").mkdir()
    (fg / "zl_broken_pkg" / "__init__.py").write_text("raise RuntimeError('half installed')\n")
    real = plugin_order.plan

    def plan_with_broken(*a, **kw):
        p = real(*a, **kw)
        return plugin_order.PluginPlan(modules=(*p.modules, "zl_broken_pkg.mod"), timer=p.timer)

    monkeypatch.setattr(plugin_order, "plan", plan_with_broken)
    err = check_of(FlagGemsProvider(), request(fg))
    assert err.check == "interpreter"
    assert "zl's cell plugins (zl_broken_pkg.mod (RuntimeError: half installed))" in err.detail


def test_interpreter_probe_runs_with_the_cells_pythonpath(fg):
    probe = FlagGemsProvider()._check_interpreter(request(fg), fg.resolve())
    assert probe["missing"] == []  # flag_gems found under <checkout>/src


def test_compile_only_is_refused(fg):
    assert check_of(FlagGemsProvider(), request(fg, compile_only=True)).check == "compile_only"


# -- cell command ----------------------------------------------------------------------


def test_cell_command_argv_is_a_list_in_plugin_order(fg):
    cmd = FlagGemsProvider().cell_command(request(fg, "fakeadd:fake:float16,bfloat16", level="comprehensive",
                                                  autotune_mode="record"))
    argv = list(cmd.argv)
    assert all(isinstance(a, str) for a in argv)
    assert argv[:7] == [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "-p"]
    plugins = [argv[i + 1] for i, a in enumerate(argv) if a == "-p"][1:]
    assert plugins == ["zl_flaggems.cell.plugins." + n for n in
                       ("phases", "vendor", "seed", "shapes", "autotune", "compile_pool", "ttgir", "timing", "foreign",
                        "results")]
    node_at = argv.index("benchmark/test_fake.py::test_fakeadd")
    assert argv[node_at + 1:] == ["--level", "comprehensive", "--mode", "kernel",
                                  "--dtypes", "float16", "--dtypes", "bfloat16"]
    assert cmd.cwd == fg.resolve()


def test_cell_command_env_and_identity(fg, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", "/already/there")
    shapes = tmp_path / "s.yaml"
    shapes.write_text("fakeadd:\n  shapes: [[1]]\n")
    cmd = FlagGemsProvider().cell_command(request(fg, shape_file=shapes))
    root = fg.resolve()
    assert cmd.env["PYTHONPATH"].split(":") == [str(root / "src"), str(root), "/already/there"]
    assert cmd.env["ZL_SHAPE_FILE"] == str(shapes.resolve())
    # the provider writes its own share of the cell contract, the core the rest
    assert {k for k in cmd.env if k.startswith("ZL_")} == set(contract.PROVIDER_WRITES)
    assert cmd.identity["provider"] == "flaggems"
    assert cmd.identity["shape_mode"] == f"file:{shapes.resolve()}"
    assert cmd.identity["timer"] == "graph"
    upstream = FlagGemsProvider().cell_command(request(fg, shape_file=shapes, shapes="upstream"))
    assert upstream.identity["shape_mode"] == "upstream" and upstream.env["ZL_SHAPE_FILE"] == ""


def test_cell_command_owns_flaggems_vendor_and_tuner_cache(fg, monkeypatch, tmp_path):
    for key in ("GEMS_VENDOR", "FLAGGEMS_VENDOR", "GEMS_BACKEND", "FLAGGEMS_BACKEND"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", "/users/own/cache")
    cmd = FlagGemsProvider().cell_command(request(fg, out_dir=tmp_path / "cell"))
    assert cmd.env["GEMS_VENDOR"] == BACKEND.flaggems_vendor
    assert cmd.env["FLAGGEMS_CACHE_DIR"] == str((tmp_path / "cell").resolve() / contract.TUNER_CACHE)
    assert cmd.unset == ("FLAGGEMS_DB_URL",) and cmd.identity["tuner_cache"] == "isolated"
    # one rule for the vendor: any of FlagGems' own variables set by the user wins
    monkeypatch.setenv("FLAGGEMS_VENDOR", "other")
    shared = FlagGemsProvider().cell_command(request(fg, out_dir=tmp_path / "c2",
                                                     isolate_tuner_cache=False))
    assert "GEMS_VENDOR" not in shared.env and "FLAGGEMS_CACHE_DIR" not in shared.env
    assert shared.unset == () and shared.identity["tuner_cache"] == "shared(/users/own/cache)"


def test_cell_command_test_node_and_kunlunxin_mode_flag(fg):
    kl = Backend(name="klx", flaggems_vendor="kunlunxin")
    cmd = FlagGemsProvider().cell_command(request(fg, backend=kl,
                                                  test_node="benchmark/test_fake.py::test_fakerng"))
    argv = list(cmd.argv)
    assert "benchmark/test_fake.py::test_fakerng" in argv
    assert "--fg_mode" in argv and "--mode" not in argv
    assert "zl_flaggems.cell.plugins.timing" in argv  # direct timing still routed (repeat, row marks)
    assert cmd.identity["timer"] == "direct"


def test_provider_commit_git_toplevel_only(tmp_path):
    outer = tmp_path / "outer"
    inner = outer / "fg"
    inner.mkdir(parents=True)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(outer)], check=True)
    (outer / "f").write_text("x")
    subprocess.run([*git, "-C", str(outer), "add", "f"], check=True)
    subprocess.run([*git, "-C", str(outer), "commit", "-q", "-m", "x"], check=True)
    # a copy inside another repository must not report that repository's commit
    assert provider_commit(inner) is None
    (inner / "COMMIT").write_text("abc123def\n")
    assert provider_commit(inner) == "abc123def"
    head = subprocess.run(["git", "-C", str(outer), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert provider_commit(outer) == head


def test_hooks_register_the_provider():
    from zl_flaggems.host import hooks

    names = [p.name for p in hooks.zl_providers()]
    assert names[0] == "flaggems"


def test_compat_plugins_come_from_the_host_the_core_passes(fg, fake_host):
    from zl_core import hookimpl

    class Compat:
        @hookimpl
        def zl_compat_plugins(self, backend):
            return ["vendor_compat.mod"] if backend.name == BACKEND.name else []

    fake_host.register(Compat(), name="compat")
    with_host = FlagGemsProvider().cell_command(request(fg), fake_host)
    plugins = [a for i, a in enumerate(with_host.argv) if with_host.argv[i - 1] == "-p"]
    assert plugins[1:4] == ["zl_flaggems.cell.plugins.phases", "vendor_compat.mod", "zl_flaggems.cell.plugins.vendor"]
    # no process-wide host is reached for: without one, no compat plugins
    without = FlagGemsProvider().cell_command(request(fg))
    assert "vendor_compat.mod" not in without.argv


def test_the_checkout_variable_is_the_providers_and_selects_it(fg, monkeypatch):
    from zl_core import PluginHost, hookimpl
    from zl_core.app.resolve import resolve_suite
    from zl_core.foundation.errors import UsageError
    from zl_flaggems.host.builtin_provider import BuiltinSuiteProvider

    class Suites:
        @hookimpl
        def zl_providers(self):
            return [FlagGemsProvider(), BuiltinSuiteProvider()]

    host = PluginHost()
    host.register(Suites(), name="suites")
    monkeypatch.delenv(FlagGemsProvider.source_env, raising=False)
    assert resolve_suite(host, None, None)[0].name == "builtin"
    with pytest.raises(UsageError, match=r"needs a checkout: .* or set \$FLAGGEMS_DIR"):
        resolve_suite(host, "flaggems", None)
    monkeypatch.setenv(FlagGemsProvider.source_env, str(fg))
    provider, source = resolve_suite(host, None, None)
    assert provider.name == "flaggems" and source == str(fg.resolve())


def test_operator_timing_asks_flaggems_for_the_operator_latency_alone(fg):
    full = FlagGemsProvider().cell_command(request(fg))
    assert "--metrics" not in full.argv  # as FlagGems runs by itself: torch's reference too
    alone = FlagGemsProvider().cell_command(request(fg, timing="operator"))
    at = alone.argv.index("--metrics")
    assert alone.argv[at + 1] == "latency" and alone.argv.count("--metrics") == 1
