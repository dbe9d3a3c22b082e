"""The TTGIR hooks against real Triton compilation for a GPU target, on a CPU-only machine.

``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`` runs the whole
NVIDIA pipeline without a device (checked with triton 3.6.0), and the compilation
listener fires, so the dump and its fingerprint are exercised for real: a switch
that changes code generation (DISABLE_MMA_V3 on an fp16 ``tl.dot``) must change the
fingerprint, and must not change it for a kernel it does not affect.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from zl_core.interface.ttgir_layout import read_index, summarize
from zl_flaggems.cell.plugins.ttgir import TritonHooks
from zl_flaggems.cell.ttgir_recorder import TtgirRecorder

triton = pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "packages" / "zl-flaggems" / "src"

KERNELS = textwrap.dedent("""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

    @triton.jit
    def dot_kernel(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        x = tl.load(a + rm[:, None] * BK + rk[None, :])
        y = tl.load(b + rk[:, None] * BN + rn[None, :])
        tl.store(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y).to(tl.float16))

    TARGET = GPUTarget("cuda", 90, 32)

    def compile_add(block=1024):
        sig = {"x": "*fp16", "y": "*fp16", "out": "*fp16", "n": "i32", "BLOCK": "constexpr"}
        return triton.compile(ASTSource(fn=add_kernel, signature=sig, constexprs={"BLOCK": block}),
                              target=TARGET)

    def compile_dot():
        sig = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "BM": "constexpr", "BN": "constexpr",
               "BK": "constexpr"}
        src = ASTSource(fn=dot_kernel, signature=sig, constexprs={"BM": 128, "BN": 128, "BK": 64})
        return triton.compile(src, target=TARGET, options={"num_warps": 8, "num_stages": 3})
""")


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZL_") and k != "DISABLE_MMA_V3"}
    paths = [str(SRC), str(ROOT / "packages" / "zl-core" / "src"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.update(extra)
    return env


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    path = tmp_path / "zl_ttgir_kernels.py"
    path.write_text(KERNELS)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton_cache"))
    monkeypatch.delenv("DISABLE_MMA_V3", raising=False)
    spec = importlib.util.spec_from_file_location("zl_ttgir_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_listener_captures_real_compiles_into_the_layout_and_chains(tmp_path, kernels):
    from triton import knobs

    seen_by_previous = []

    def previous(**kwargs):
        seen_by_previous.append(kwargs["metadata"]["name"])

    knobs.compilation.listener = previous
    rec = TtgirRecorder()
    rec.dump_unlaunched = True  # nothing can launch here: dump what compiled
    hooks = TritonHooks(rec)
    try:
        assert hooks.install() and not hooks.notes
        assert rec.launch_hook in knobs.runtime.launch_enter_hook.calls
        assert rec.on_load in knobs.runtime.kernel_load_end_hook.calls
        rec.set_current_shape("n1024")
        compiled = kernels.compile_add(256)
        kernels.compile_add(1024)
        kernels.compile_add(256)  # a disk-cache hit: the listener fires again, no new variant
        rec.set_current_shape("mm")
        kernels.compile_dot()
        root = rec.flush(tmp_path / "ttgir")
    finally:
        hooks.uninstall()
    assert knobs.compilation.listener is previous  # restored, and it was called all along
    knobs.compilation.listener = None
    assert rec.launch_hook not in knobs.runtime.launch_enter_hook.calls
    assert seen_by_previous == ["add_kernel"] * 3 + ["dot_kernel"]
    assert rec.stats()["compile_events"] == 4 and rec.stats()["cache_hit_events"] == 1
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.ttgir"))
    assert files == ["mm/dot_kernel/default.ttgir", "n1024/add_kernel/BLOCK=1024.ttgir",
                     "n1024/add_kernel/BLOCK=256.ttgir"]
    assert (root / "n1024/add_kernel/BLOCK=256.ttgir").read_text() == compiled.asm["ttgir"]
    assert {r.file for r in read_index(root)} == set(files)


def test_launch_counting_can_be_paused_around_a_timed_block():
    from triton import knobs

    rec = TtgirRecorder()
    hooks = TritonHooks(rec)
    hooks.install()
    try:
        with hooks.launch_counting_paused():
            assert rec.launch_hook not in knobs.runtime.launch_enter_hook.calls
        assert rec.launch_hook in knobs.runtime.launch_enter_hook.calls
    finally:
        hooks.uninstall()
    assert rec.launch_hook not in knobs.runtime.launch_enter_hook.calls


def test_driver_cache_clearing_counts_as_harness():
    from triton.backends import backends

    drivers = [b.driver for b in backends.values() if "clear_cache" in b.driver.__dict__]
    assert drivers, "this Triton has no driver with clear_cache"
    originals = {cls: cls.__dict__["clear_cache"] for cls in drivers}
    rec = TtgirRecorder()
    handle = object()

    class Cache:  # what do_bench passes: a buffer whose zero_() launches a kernel
        def zero_(self):
            rec.launch_hook(type("L", (), {"data": {"function": handle}})())

    hooks = TritonHooks(rec)
    hooks.install()
    try:
        for cls in drivers:
            cls.clear_cache(object(), Cache())  # unbound: no driver is instantiated
    finally:
        hooks.uninstall()
    assert {cls: cls.__dict__["clear_cache"] for cls in drivers} == originals
    assert rec._apart_counts["harness"] == {handle: len(drivers)}
    assert not rec._shape_counts["all"]


def test_sweep_marker_wraps_autotuner_bench(tmp_path, kernels):
    from triton import Config
    from triton.runtime.autotuner import Autotuner

    rec = TtgirRecorder()
    handles = {64: object(), 128: object()}

    class Runner:  # "launches" by calling the launch hook like the real launcher would
        def run(self, *args, **kwargs):
            rec.launch_hook(type("L", (), {"data": {"function": handles[kwargs["BLOCK"]]}})())

    def bench(kernel_call, quantiles):
        kernel_call()
        return [1.0, 1.0, 1.0]

    fn = kernels.add_kernel
    tuner = Autotuner(fn, fn.arg_names, [Config({"BLOCK": 64}), Config({"BLOCK": 128})], ["n"], None, None,
                      do_bench=bench)
    tuner.fn = Runner()
    hooks = TritonHooks(rec)
    original = Autotuner.__dict__["_bench"]
    try:
        hooks.install()
        assert Autotuner.__dict__["_bench"] is not original
        tuner.run(None, None, None, 100, grid=(1,))
        tuner.run(None, None, None, 100, grid=(1,))
    finally:
        hooks.uninstall()
    assert Autotuner.__dict__["_bench"] is original
    assert rec._apart_counts["sweep"] == {handles[64]: 1, handles[128]: 1}
    assert rec._shape_counts["all"] == {handles[64]: 2}  # the winner's real launches


CELL_TEST = textwrap.dedent("""
    import os, signal
    from pathlib import Path
    import zl_ttgir_kernels as k
    from zl_flaggems.cell.ttgir_recorder import recorder_stats, set_current_shape

    def test_compile():
        kind = os.environ["KIND"]
        set_current_shape(kind)
        getattr(k, "compile_" + kind)()
        if os.environ.get("KILL"):
            os.kill(os.getpid(), signal.SIGTERM)
        set_current_shape("after")  # a shape change writes what ran so far
        index = Path(os.environ["ZL_CELL_DIR"]) / "ttgir" / "index.tsv"
        assert kind + "/" in index.read_text()
        # measured and recorded; its size is a timing (a busy host can bring it to 0)
        cost = recorder_stats()["hook_ns_per_call"]
        assert isinstance(cost, float) and cost >= 0
""")


def _suite(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "zl_ttgir_kernels.py").write_text(KERNELS)
    (directory / "test_cell.py").write_text(CELL_TEST)
    return directory


def _cell(tmp_path: Path, name: str, kind: str, suite: Path | None = None,
          **env: str) -> tuple[Path, subprocess.CompletedProcess]:
    """One cell process: the plugin loaded into pytest, compile-only, its own caches."""
    suite = suite or _suite(tmp_path / "checkout")  # both sides run the same checkout
    cell = tmp_path / name
    cell.mkdir()
    env.setdefault("TRITON_CACHE_DIR", str(tmp_path / f"cache_{name}"))
    proc = subprocess.run(  # the return code is asserted
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "zl_flaggems.cell.plugins.ttgir",
         "test_cell.py"],
        cwd=suite, capture_output=True, text=True, timeout=600,
        env=_env(ZL_CELL_DIR=str(cell), ZL_COMPILE_ONLY="1", KIND=kind, **env))
    return cell / "ttgir", proc


@pytest.mark.parametrize("kind, changes", [("dot", True), ("add", False)])
def test_disable_mma_v3_changes_the_fingerprint_only_where_codegen_changes(tmp_path, kind, changes):
    off, proc_off = _cell(tmp_path, "off", kind)
    on, proc_on = _cell(tmp_path, "on", kind, DISABLE_MMA_V3="1")
    assert proc_off.returncode == 0, proc_off.stdout + proc_off.stderr
    assert proc_on.returncode == 0, proc_on.stdout + proc_on.stderr
    a, b = summarize(off), summarize(on)
    assert a.fingerprint and b.fingerprint and a.files == b.files == 1
    assert (a.fingerprint != b.fingerprint) is changes
    (file_a,) = off.rglob("*.ttgir")
    (file_b,) = on.rglob("*.ttgir")
    assert file_a.relative_to(off) == file_b.relative_to(on)  # same names: only the content may differ
    if kind == "dot":
        assert "versionMajor = 3" in file_a.read_text() and "warp_group_dot" in file_a.read_text()
        assert "versionMajor = 2" in file_b.read_text() and "warp_group_dot" not in file_b.read_text()


def test_kernels_generated_into_per_cell_caches_fingerprint_alike(tmp_path):
    """FlagGems writes generated kernels under FLAGGEMS_CACHE_DIR, private to each cell when
    the tuner cache is isolated; their loc(...) paths must not make two identical sides differ."""
    dumps = []
    for side in ("a", "b"):
        gen = tmp_path / f"flaggems_cache_{side}"
        suite = _suite(gen / "code_cache")
        ttgir, proc = _cell(tmp_path, side, "add", suite=suite, FLAGGEMS_CACHE_DIR=str(gen))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (dumped,) = ttgir.rglob("*.ttgir")
        assert str(gen) not in dumped.read_text() and "<FLAGGEMS_CACHE_DIR>/code_cache" in dumped.read_text()
        dumps.append(summarize(ttgir).fingerprint)
    assert dumps[0] is not None and dumps[0] == dumps[1]


def test_plugin_dump_survives_sigterm(tmp_path):
    ttgir, proc = _cell(tmp_path, "killed", "add", KILL="1")
    assert proc.returncode == -signal.SIGTERM, proc.stdout + proc.stderr
    rows = read_index(ttgir)
    assert [(r.shape, r.kernel) for r in rows] == [("add", "add_kernel")]
    assert summarize(ttgir).files == 1


def test_plugin_is_inert_without_a_cell(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_inert.py").write_text(textwrap.dedent("""
        from triton import knobs
        def test_inert():
            assert knobs.compilation.listener is None
            assert not knobs.runtime.launch_enter_hook.calls
    """))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "zl_flaggems.cell.plugins.ttgir", "test_inert.py"], cwd=suite, capture_output=True,
                          text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
