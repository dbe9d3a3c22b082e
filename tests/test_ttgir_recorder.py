"""TTGIR dump bookkeeping: launches per (shape, kernel), variant names, index, crash safety.

These feed :class:`TtgirRecorder` the way Triton's hooks do (listener keyword
arguments, load-hook positional arguments, launch metadata with a ``data`` dict)
without needing a GPU; the real-compiler path is in test_ttgir_listener_triton.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from zl_core.interface.ttgir_layout import read_index, summarize
from zl_flaggems.cell import ttgir_hook_cost, ttgir_recorder
from zl_flaggems.cell.ttgir_recorder import NO_TTGIR, SWEEP_SHAPE, UNRESOLVED, TtgirRecorder

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "packages" / "zl-flaggems" / "src"


class Src:
    """The attributes of triton.compiler.ASTSource the recorder reads."""

    def __init__(self, name, constants, signature=None, attrs=None):
        class Fn:
            arg_names = ("x", "out", "n", "BLOCK", "EVEN")

        self.fn, self.name = Fn(), name
        self.constants = {(Fn.arg_names.index(k),): v for k, v in constants.items()}
        self.signature = signature or {"x": "*fp16", "out": "*fp16", "n": "i32", "BLOCK": "constexpr",
                                       "EVEN": "constexpr"}
        self.attrs = attrs or {}


class Launch:
    """Launch metadata as Triton passes it (a LazyDict: the values live in ``.data``)."""

    def __init__(self, function):
        self.data = {"name": "k", "function": function, "stream": 0}


def compile_variant(rec, tmp_path, digest, name="add_kernel", text=None, num_warps=4, **constants):
    ttgir = tmp_path / "cache" / digest / f"{name}.ttgir"
    ttgir.parent.mkdir(parents=True, exist_ok=True)
    ttgir.write_text(text if text is not None else f"// ttgir of {name} {digest}\nmodule {{}}\n")
    rec.on_compile(src=Src(name, constants),
                   metadata={"hash": digest, "name": name, "num_warps": num_warps, "num_stages": 3,
                             "num_ctas": 1},
                   metadata_group={f"{name}.ttgir": str(ttgir), f"{name}.json": str(ttgir) + ".json"},
                   times=None, cache_hit=False)
    function = object()  # a loaded function handle
    rec.on_load(None, function, name, {}, digest)
    return function


def launch(rec, function, times=1):
    for _ in range(times):
        rec.launch_hook(Launch(function))


def test_names_use_only_the_constexprs_that_differ_within_a_shape_and_kernel(tmp_path):
    rec = TtgirRecorder()
    f64 = compile_variant(rec, tmp_path, "h64", BLOCK=64, EVEN=True)
    f128 = compile_variant(rec, tmp_path, "h128", BLOCK=128, EVEN=True)
    fsoft = compile_variant(rec, tmp_path, "hs", name="softmax_kernel", BLOCK=64, EVEN=True)
    rec.set_current_shape("float16_64x64")
    launch(rec, f64, 5)
    launch(rec, fsoft, 2)
    rec.set_current_shape("float16_4096x4096")
    launch(rec, f128, 7)
    launch(rec, f64, 1)
    root = rec.flush(tmp_path / "ttgir")
    rows = {(r.shape, r.kernel, r.file): r.launches for r in read_index(root)}
    assert rows == {
        ("float16_64x64", "add_kernel", "float16_64x64/add_kernel/default.ttgir"): 5,
        ("float16_64x64", "softmax_kernel", "float16_64x64/softmax_kernel/default.ttgir"): 2,
        ("float16_4096x4096", "add_kernel", "float16_4096x4096/add_kernel/BLOCK=128.ttgir"): 7,
        ("float16_4096x4096", "add_kernel", "float16_4096x4096/add_kernel/BLOCK=64.ttgir"): 1,
    }
    assert (root / "float16_4096x4096/add_kernel/BLOCK=128.ttgir").read_text().startswith("// ttgir of add_kernel h128")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.ttgir")) == sorted(
        f for (_, _, f) in rows)
    assert summarize(root).files == 4


def test_launch_options_and_dtype_name_variants_when_constexprs_agree(tmp_path):
    rec = TtgirRecorder()
    fa = compile_variant(rec, tmp_path, "a", num_warps=4, BLOCK=64)
    fb = compile_variant(rec, tmp_path, "b", num_warps=8, BLOCK=64)
    launch(rec, fa)
    launch(rec, fb)
    files = sorted(r.file for r in read_index(rec.flush(tmp_path / "ttgir")))
    assert files == ["all/add_kernel/num_warps=4.ttgir", "all/add_kernel/num_warps=8.ttgir"]


def test_signature_parts_name_a_variant_only_to_break_a_tie(tmp_path):
    rec = TtgirRecorder()
    fp16 = compile_variant(rec, tmp_path, "a", BLOCK=64)
    rec.variants["a"].params["sig.scalar"] = "tensordesc<fp16[64]>"  # repeats the block size
    fp16b = compile_variant(rec, tmp_path, "b", BLOCK=128)
    rec.variants["b"].params["sig.scalar"] = "tensordesc<fp16[128]>"
    launch(rec, fp16)
    launch(rec, fp16b)
    assert sorted(r.file for r in read_index(rec.flush(tmp_path / "t1"))) == [
        "all/add_kernel/BLOCK=128.ttgir", "all/add_kernel/BLOCK=64.ttgir"]
    rec = TtgirRecorder()
    half = compile_variant(rec, tmp_path, "h", BLOCK=64)
    single = compile_variant(rec, tmp_path, "s", BLOCK=64)
    rec.variants["s"].params["sig.ptr"] = "fp32"  # same config, other dtype: the tie breaker names it
    launch(rec, half)
    launch(rec, single)
    assert sorted(r.file for r in read_index(rec.flush(tmp_path / "t2"))) == [
        "all/add_kernel/sig.ptr=fp16.ttgir", "all/add_kernel/sig.ptr=fp32.ttgir"]


def test_autotune_sweep_launches_are_not_dumped(tmp_path):
    rec = TtgirRecorder()
    loser = compile_variant(rec, tmp_path, "lose", BLOCK=32)
    winner = compile_variant(rec, tmp_path, "win", BLOCK=256)
    rec.set_current_shape("s1")
    with rec.sweep():
        launch(rec, loser, 40)
        launch(rec, winner, 40)
    launch(rec, winner, 3)
    root = rec.flush(tmp_path / "ttgir")
    rows = read_index(root)
    dumped = [r for r in rows if r.file.endswith(".ttgir")]
    assert [(r.shape, r.file, r.launches) for r in dumped] == [("s1", "s1/add_kernel/default.ttgir", 3)]
    sweep = [r for r in rows if r.shape == SWEEP_SHAPE]
    assert len(sweep) == 1 and "not dumped" in sweep[0].file and sweep[0].launches == 0
    assert summarize(root).files == 1
    assert rec.stats()["sweep_launches"] == 80 and rec.stats()["launches_counted"] == 3


def test_harness_launches_are_listed_apart_unless_the_benchmark_runs_them_too(tmp_path):
    rec = TtgirRecorder()
    fill = compile_variant(rec, tmp_path, "f", name="fill_scalar_kernel", BLOCK=1024)
    op = compile_variant(rec, tmp_path, "o", name="softmax_kernel", BLOCK=64)
    rec.set_current_shape("s")
    for _ in range(5):  # do_bench: clear L2 (a fill), then the timed call
        with rec.harness():
            launch(rec, fill)
        launch(rec, op)
    rows = read_index(rec.flush(tmp_path / "t1"))
    assert [(r.shape, r.kernel, r.launches) for r in rows if r.file.endswith(".ttgir")] == [("s", "softmax_kernel", 5)]
    assert [r.file for r in rows if r.shape == SWEEP_SHAPE] == ["(benchmark harness only, not dumped: default)"]
    assert rec.stats()["harness_launches"] == 5
    launch(rec, fill, 2)  # the operator under test uses the fill kernel itself: now it is dumped
    rows = read_index(rec.flush(tmp_path / "t2"))
    assert {(r.kernel, r.launches) for r in rows if r.file.endswith(".ttgir")} == {
        ("softmax_kernel", 5), ("fill_scalar_kernel", 2)}


def test_group_membership_change_renames_and_removes_stale_files(tmp_path):
    rec = TtgirRecorder()
    f64 = compile_variant(rec, tmp_path, "h64", BLOCK=64)
    launch(rec, f64)
    root = rec.flush(tmp_path / "ttgir")
    assert (root / "all/add_kernel/default.ttgir").is_file()
    f128 = compile_variant(rec, tmp_path, "h128", BLOCK=128)
    launch(rec, f128)
    rec.flush(root)
    names = sorted(p.name for p in root.rglob("*.ttgir"))
    assert names == ["BLOCK=128.ttgir", "BLOCK=64.ttgir"]  # default.ttgir is gone
    assert not list(root.rglob("*.tmp"))


def test_unknown_handles_and_missing_ttgir_are_indexed_not_dumped(tmp_path):
    rec = TtgirRecorder()
    launch(rec, object(), 4)  # a kernel compiled before the recorder existed
    function = object()
    rec.on_compile(src=Src("k", {"BLOCK": 1}), metadata={"hash": "h", "name": "k"}, metadata_group={},
                   times=None, cache_hit=True)
    rec.on_load(None, function, "k", {}, "h")
    launch(rec, function, 2)
    rows = read_index(rec.flush(tmp_path / "ttgir"))
    assert {(r.kernel, r.file, r.launches) for r in rows} == {("?", UNRESOLVED, 4), ("k", NO_TTGIR, 2)}
    assert summarize(tmp_path / "ttgir").fingerprint is None  # no .ttgir, no fingerprint
    assert rec.stats()["cache_hit_events"] == 1


def test_resolver_maps_handles_at_flush_time(tmp_path):
    rec = TtgirRecorder()
    function = object()
    ttgir = tmp_path / "k.ttgir"
    ttgir.write_text("module {}\n")
    rec.on_compile(src=Src("k", {"BLOCK": 8}), metadata={"hash": "h", "name": "k"},
                   metadata_group={"k.ttgir": str(ttgir)}, times=None, cache_hit=False)
    launch(rec, function, 3)  # no load hook (Triton 3.4)
    scans = []
    rec.resolver = lambda: (scans.append(1), rec.on_load(None, function, "k", {}, "h"))
    rows = read_index(rec.flush(tmp_path / "ttgir"))
    assert [(r.file, r.launches) for r in rows] == [("all/k/default.ttgir", 3)]
    launch(rec, object())  # never resolvable: scanned for once, not at every flush
    rec.flush(tmp_path / "ttgir")
    rec.flush(tmp_path / "ttgir")
    assert len(scans) == 2


def test_compile_only_dumps_compiled_variants_under_their_first_shape(tmp_path):
    rec = TtgirRecorder()
    rec.dump_unlaunched = True
    rec.set_current_shape("compile")
    compile_variant(rec, tmp_path, "h1", BLOCK=16)
    rows = read_index(rec.flush(tmp_path / "ttgir"))
    assert [(r.shape, r.file, r.launches) for r in rows] == [("compile", "compile/add_kernel/default.ttgir", 0)]


def test_per_cell_directories_are_aliased_by_whole_path_component(tmp_path):
    rec = TtgirRecorder()
    rec.alias_paths({"FLAGGEMS_CACHE_DIR": "/tmp/cell1/fg", "ZL_CELL_DIR": "/tmp/cell1", "UNSET": None})
    text = 'loc("/tmp/cell1/fg/code_cache/k.py":3:4)\nloc("/tmp/cell1/x.py":1:1)\nloc("/tmp/cell10/y.py":2:2)'
    function = compile_variant(rec, tmp_path, "h", text=text, BLOCK=1)
    launch(rec, function)
    root = rec.flush(tmp_path / "ttgir")
    assert (root / "all/add_kernel/default.ttgir").read_text().splitlines() == [
        'loc("<FLAGGEMS_CACHE_DIR>/code_cache/k.py":3:4)', 'loc("<ZL_CELL_DIR>/x.py":1:1)',
        'loc("/tmp/cell10/y.py":2:2)']


def test_module_api_defaults_to_all_and_notifies_shape_listeners():
    rec = ttgir_recorder.get_recorder()
    seen = []
    rec.add_shape_listener(seen.append)
    try:
        before = ttgir_recorder.current_shape()
        ttgir_recorder.set_current_shape("zl_test_shape")
        ttgir_recorder.set_current_shape("zl_test_shape")  # unchanged: no second notification
        assert seen == ["zl_test_shape"]
        assert ttgir_recorder.current_shape() == "zl_test_shape"
        assert isinstance(ttgir_recorder.recorder_stats()["launches_counted"], int)
    finally:
        rec.remove_shape_listener(seen.append)
        ttgir_recorder.set_current_shape(before)
    assert TtgirRecorder().current_shape == "all"


def test_launch_hook_accepts_triton_lazydict_and_is_cheap():
    triton_compiler = pytest.importorskip("triton.compiler")
    rec = TtgirRecorder()
    function = object()
    rec.launch_hook(triton_compiler.LazyDict({"name": "k", "function": function, "stream": 0}))
    assert rec._shape_counts["all"] == {function: 1}
    cost = ttgir_hook_cost.measure_hook_cost(5000)
    assert 0 < cost < 20000  # nanoseconds; a generous bound, the real number is in recorder_stats()


def test_dump_survives_sigterm(tmp_path):
    """A cell killed by its timeout (SIGTERM) still leaves the dump of what ran."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        from pathlib import Path
        from zl_flaggems.cell import crashsafe
        from zl_flaggems.cell.ttgir_recorder import get_recorder, set_current_shape
        rec = get_recorder()
        root = Path({str(tmp_path / "ttgir")!r})
        crashsafe.register(lambda: rec.flush(root))
        ttgir = Path({str(tmp_path / "k.ttgir")!r})
        ttgir.write_text("module {{}}\\n")
        class Src:
            name, constants, signature, attrs = "k", {{}}, {{}}, {{}}
        rec.on_compile(src=Src(), metadata={{"hash": "h", "name": "k"}},
                       metadata_group={{"k.ttgir": str(ttgir)}}, times=None, cache_hit=False)
        handle = object()
        rec.on_load(None, handle, "k", {{}}, "h")
        set_current_shape("s1")
        class L:
            data = {{"function": handle}}
        for _ in range(9):
            rec.launch_hook(L())
        os.kill(os.getpid(), signal.SIGTERM)
        print("still alive")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(ROOT / "packages/zl-core/src"),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert proc.returncode == -signal.SIGTERM, proc.stderr  # still reported as killed by SIGTERM
    assert "still alive" not in proc.stdout
    rows = read_index(tmp_path / "ttgir")
    assert [(r.shape, r.file, r.launches) for r in rows] == [("s1", "s1/k/default.ttgir", 9)]
