"""The ``sleepy`` suite: operators whose cells sleep (sleepy_cell.py), for campaigns
over several fake CUDA devices (bin/nvidia-smi). ``register(host)`` adds it to a
plugin host; ``python zl_fake_lanes.py ARGS`` is ``zl ARGS`` with it registered."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import attrs
from zl_core import hookimpl
from zl_core.campaigns.executor import Lane
from zl_core.foundation.backend import Backend
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import (
    CellCommand,
    CellRequest,
    CheckSpec,
    OpInfo,
    Provider,
    ShardMerge,
    WarmPlan,
)
from zl_core.store.layout import CampaignLayout

HERE = Path(__file__).resolve().parent
BIN = HERE / "bin"
DEFAULT_OPS = ("abs", "add", "mul", "sub", "exp", "log", "sin", "cos")


class SleepyProvider(Provider):
    name = "sleepy"
    description = "cells that sleep (tests)"
    supports_sweep_shards = True

    def merge_sweep_shards(self, shard_cells, into):
        """Every shard must have measured; the first one's record is the merge."""
        import shutil

        for i, cell in enumerate(shard_cells):
            if not (Path(cell) / "results.json").is_file():
                return ShardMerge(problem=f"shard {i} left no results")
        shutil.copytree(Path(shard_cells[0]) / "autotune_records", Path(into) / "autotune_records")
        return ShardMerge(entries=1)

    def list_ops(self, source):
        names = os.environ.get("ZL_FAKE_OPS", "").split() or DEFAULT_OPS
        # "retired" stands for a benchmark under an unconditional skip mark.
        return [OpInfo(op=o, op_file=f"test_{o}.py") for o in names] + [
            OpInfo(op="retired", op_file="test_retired.py", skip="retired upstream")]

    def preflight(self, request, host=None):
        pass

    def rejected_dtypes(self, cell_dir):
        log = Path(cell_dir) / "run.log"
        return log.is_file() and "can't be supported by this op" in log.read_text(errors="replace")

    def read_rows(self, cell_dir):
        """results.json as any provider reads it; with $ZL_FAKE_SLOW_FINISH, the cell's own
        rows file (sleepy_cell.py), read that many seconds slower once the campaign's cells
        have ended (its finish reads every cell for summary.csv), so a test can send a
        signal into the finish."""
        import json
        import time

        from zl_core.interface.rows import CellRows, read_results

        own = Path(cell_dir) / "rows.sleepy.json"
        slow = float(os.environ.get("ZL_FAKE_SLOW_FINISH") or 0)
        if not (slow and own.is_file()):
            return super().read_rows(cell_dir)
        campaign = next((p for p in Path(cell_dir).parents if (p / "campaign.json").is_file()), None)
        try:
            if json.loads((campaign / "campaign.json").read_text()).get("state") == "finishing":
                time.sleep(slow)
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        # read as results.json would be, from a copy under that name
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(own, Path(tmp) / "results.json")
            got = read_results(Path(tmp))
        return CellRows(cell_dir=Path(cell_dir), rows=got.rows, source=own.name,
                        identity=super().read_rows(cell_dir).identity, markers=got.markers)

    def warm_plan(self, request):
        return WarmPlan(modules=("json",))

    supports_checks = True

    def default_check(self, op, source):
        return CheckSpec(file="checks/" + op.op_file, select=("-m", op.op))

    def cell_command(self, request, host=None):
        if request.check is not None:  # accuracy tests: "wrong*" operators fail on side B
            return CellCommand(argv=(sys.executable, str(HERE / "sleepy_check.py")),
                               cwd=Path(request.out_dir), identity={"provider_commit": "sleepy"})
        return CellCommand(argv=(sys.executable, str(HERE / "sleepy_cell.py")), cwd=Path(request.out_dir),
                           identity={"provider_commit": "sleepy"})


class SleepySuite:
    @hookimpl
    def zl_providers(self):
        return [SleepyProvider()]


@attrs.frozen(kw_only=True)
class PairTask:
    """A task record shaped like a screen task: one operator, two cells (A records into
    ``<root>/<op>/A``, B replays it into ``<op>/B``), no device."""

    op: OpSpec
    backend: Backend
    python: str
    root: Path  # the campaign folder


@attrs.frozen(kw_only=True)
class Runtime:
    host: object
    sink: object


def pair_requests(task: PairTask, lane: Lane) -> tuple[CellRequest, CellRequest]:
    """The pair's cells on ``lane``: its device, its copy of the campaign folder."""
    layout = lane.layout(CampaignLayout(task.root))
    a_dir = layout.cell_dir(task.op.op, "A")
    common = {"op": task.op, "backend": task.backend, "python": task.python, "device": lane.device,
              "timeout_s": 60}
    return (CellRequest(out_dir=a_dir, side="A", autotune_mode="record", **common),
            CellRequest(out_dir=layout.cell_dir(task.op.op, "B"), side="B", autotune_mode="replay",
                        replay_from=a_dir, **common))


def run_pair(task: PairTask, lane: Lane, runtime: Runtime) -> list:
    """Run the pair's cells on the lane (importable, so a Dask worker can run it too)."""
    from zl_core.cells.cell import run_cell

    provider = runtime.host.get_provider("sleepy")
    outcomes = [run_cell(runtime.host, provider, req) for req in pair_requests(task, lane)]
    for outcome in outcomes:
        runtime.sink.line(f"{task.op.op} {outcome.cell_dir.name} rc={outcome.rc}")
    return outcomes


HOOKS = ("zl_backends", "zl_enumerate_devices", "zl_device_identity", "zl_classify_capture_error",
         "zl_telemetry_command", "zl_parse_telemetry", "zl_compat_plugins", "zl_providers")


def broken_plugin(how: str, hooks: tuple[str, ...]) -> object:
    """A third-party plugin whose ``hooks`` raise or hang (``how``) every time they are called."""
    import inspect
    import time

    from zl_core.plugins import hookspecs

    def make(name):
        params = list(inspect.signature(getattr(hookspecs, name)).parameters)

        def impl(*args):
            if how == "hang":
                time.sleep(600)
            raise RuntimeError(f"brokenvendor's {name} is broken")

        impl.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
        impl.__name__ = name
        return hookimpl(impl)

    return type("BrokenVendor", (), {name: staticmethod(make(name)) for name in hooks})()


def register(host) -> None:
    host.register(SleepySuite(), name="sleepy", package="tests", version="0")
    broken = os.environ.get("ZL_FAKE_BROKEN_PLUGIN", "")  # "raise" or "hang", [":" hook,hook]
    if broken:
        how, _, which = broken.partition(":")
        host.register(broken_plugin(how, tuple(which.split(",")) if which else HOOKS),
                      name="brokenvendor", package="zl-backend-broken", version="0")


if __name__ == "__main__":
    from zl_core.cli import main
    from zl_core.plugins.host import plugin_host

    register(plugin_host())
    sys.exit(main(sys.argv[1:]))
