"""Shared fixtures: a plugin host with an in-test backend and a fake provider whose
cells are real processes honouring the ZL_* contract (tests/fake_cell.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from zl_core import Backend, PluginHost, hookimpl
from zl_core.foundation.errors import PreflightError
from zl_core.interface.provider import CellCommand, OpInfo, Provider, ShardMerge, WarmPlan

FAKE_CELL = Path(__file__).with_name("fake_cell.py")


def _fault_tally() -> dict | None:
    faults = sys.modules.get("test_fault_injection")
    return faults.TALLY if faults is not None else None


def pytest_terminal_summary(terminalreporter, config):
    """The fault-injection suite's figures (tests/test_fault_injection.py), when it ran:
    this process's own, or (under pytest-xdist) the sum of what each worker sent back."""
    tally = _fault_tally() or _WORKER_TALLIES
    if tally and tally["injected"]:
        import test_fault_injection

        terminalreporter.write_line(test_fault_injection.figures(tally))


#: The controller's sum of its pytest-xdist workers' tallies.
_WORKER_TALLIES: dict[str, int] = {}


def pytest_sessionfinish(session):
    """An xdist worker sends its fault-injection tally back to the controller."""
    tally = _fault_tally()
    if tally is not None and hasattr(session.config, "workeroutput"):
        session.config.workeroutput["fault_tally"] = dict(tally)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller adds up the tallies its xdist workers sent back."""
    sent = getattr(node, "workeroutput", {}).get("fault_tally")
    for key, value in (sent or {}).items():
        _WORKER_TALLIES[key] = _WORKER_TALLIES.get(key, 0) + value


def pytest_configure(config):
    config.addinivalue_line("markers", "readme: runs the README's quick-start commands in a fresh "
                            "virtualenv (minutes; -m 'not readme' leaves it out)")
    config.addinivalue_line("markers", "slow: takes 2.5 s or more on a 2-core machine (a campaign of "
                            "many cells, a stall window, a compiled suite, a browser, a fresh "
                            "virtualenv); CI runs it, -m 'not slow' leaves it out while iterating")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (noxfile.py hands out whole files, --dist loadfile) the files
    holding a slow test come first, so the run does not end waiting on one of them
    started last. The sort is stable: each file's tests stay together and in order."""
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
        items.sort(key=lambda item: item.path not in slow_files)


class FakeProvider(Provider):
    name = "fake"
    description = "test provider"
    supports_compile_only = True
    #: What its warm cells import before they fork (tests change it).
    warm_modules: tuple[str, ...] = ("json", "decimal")

    def warm_plan(self, request):
        return WarmPlan(modules=self.warm_modules)

    supports_sweep_shards = True

    def list_ops(self, source):
        return [OpInfo(op=o, op_file=o) for o in ("gemm", "pointwise")]

    def merge_sweep_shards(self, shard_cells, into):
        """The fake cells' records: every shard must say it was one; the first's picks
        are the merge ("shardhole" merges none, so its replay misses a key)."""
        import json
        import shutil

        for i, cell in enumerate(shard_cells):
            ident = json.loads((Path(cell) / "run_identity.json").read_text())
            if "sweep_shard" not in ident:
                return ShardMerge(problem=f"shard {i} recorded no shape slice")
        target = Path(into) / "autotune_records"
        shutil.copytree(Path(shard_cells[0]) / "autotune_records", target)
        if ident.get("op") == "shardhole":
            (target / "kernel.json").unlink()
        return ShardMerge(entries=1, conflicts=("kernel key (64,): shard 0 picked 64, shard 1 32",))

    def preflight(self, request, host=None):
        if request.op.op == "missing":
            raise PreflightError("benchmark_file", "benchmark/test_missing.py does not exist")
        if request.replay_from is not None and not (Path(request.replay_from) / "autotune_records").is_dir():
            raise PreflightError("replay_dir", f"{request.replay_from} has no autotune_records/")

    def cell_command(self, request, host=None):
        return CellCommand(argv=(sys.executable, str(FAKE_CELL)), cwd=Path(request.out_dir),
                           identity={"provider_commit": "test"})


class FakeVendor:
    @hookimpl
    def zl_backends(self):
        return [Backend(name="fakegpu", aliases=("fg",), visibility_env_keys=("FAKE_VISIBLE_DEVICES",),
                        graph_capture=True, default_switch="FAKE_SWITCH")]

    @hookimpl
    def zl_enumerate_devices(self, backend, explicit):
        return ["0"] if backend.name == "fakegpu" else None

    @hookimpl
    def zl_providers(self):
        return [FakeProvider()]


@pytest.fixture
def fake_host(monkeypatch):
    host = PluginHost()
    host.register(FakeVendor(), name="fakevendor", package="tests", version="0")
    import zl_core.plugins.host as host_module

    monkeypatch.setattr(host_module, "_HOST", host)
    return host


@pytest.fixture(autouse=True)
def private_device_locks(tmp_path_factory, monkeypatch):
    """Each test takes device locks in its own folder, so parallel runs never wait on each other."""
    monkeypatch.setenv("ZL_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))


@pytest.fixture(autouse=True)
def private_digest_cache(tmp_path_factory, monkeypatch):
    """Compiler digests are cached for the whole session in its own folder, never the user's."""
    monkeypatch.setenv("ZL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "zl-cache"))


@pytest.fixture
def lanes_host(monkeypatch, tmp_path):
    """A host with the real CUDA backend over a fake 4-GPU nvidia-smi and the sleepy suite
    (tests/fake_lanes); cells log what they saw to ``tmp_path/ledger.tsv``."""
    import zl_backend_cuda.plugin as cuda_plugin

    fakes = Path(__file__).with_name("fake_lanes")
    if str(fakes) not in sys.path:
        sys.path.insert(0, str(fakes))
    import zl_fake_lanes

    monkeypatch.setenv("PATH", f"{fakes / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("ZL_FAKE_LEDGER", str(tmp_path / "ledger.tsv"))
    monkeypatch.setenv("ZL_FAKE_SLEEP", "0.2")
    host = PluginHost()
    host.register(cuda_plugin, name="cuda", package="zl-backend-cuda", version="0")
    zl_fake_lanes.register(host)
    return host


@pytest.fixture
def lanes_main(lanes_host, monkeypatch, tmp_path):
    """``zl_core.cli.main`` in this process, over :func:`lanes_host`: campaigns under
    ``tmp_path/runs``, backend cuda, no FlagGems checkout from the environment."""
    import zl_core.plugins.host as host_module
    from zl_core.cli import main

    monkeypatch.setattr(host_module, "_HOST", lanes_host)
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "runs"))
    monkeypatch.setenv("ZL_BACKEND", "cuda")
    monkeypatch.delenv("FLAGGEMS_DIR", raising=False)
    return main


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A machine whose vendor tools are what a test puts in the returned folder (first on
    PATH, beside the interpreter's own): no device until it writes one; no visibility
    mask, backend or FlagGems checkout from the environment; campaigns under tmp/runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), "/usr/bin", "/bin"]))
    for key in ("CUDA_VISIBLE_DEVICES", "ZL_BACKEND", "FLAGGEMS_DIR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "runs"))
    return bin_dir
