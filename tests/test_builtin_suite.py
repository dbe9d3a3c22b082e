"""The built-in suite without a device and without torch: kernels, specs, listing,
FlagGems' table format, shape lookup, and the provider's checks and commands."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

from zl_core import Backend
from zl_core.foundation.errors import PreflightError
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest
from zl_flaggems.builtin import kernels
from zl_flaggems.builtin.benchmark import base, conftest, consts
from zl_flaggems.common import plugin_order
from zl_flaggems.host.builtin_provider import (
    SUITE_DIR,
    BuiltinSuiteProvider,
    read_benchmark_file,
)

CUDA = Backend(name="cuda", visibility_env_keys=("CUDA_VISIBLE_DEVICES",), graph_capture=True)
EXPECTED_OPS = {"add", "gelu", "layer_norm", "mm", "mm_f32", "softmax", "sum"}


# -- kernels -------------------------------------------------------------------------------


def test_kernel_modules_import_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"  # any 'import torch' now raises
            "from zl_flaggems.builtin import kernels\n"
            "for op in kernels.OPS: kernels.load(op)\n"
            "import zl_flaggems.cell.compile_only\n"
            "from zl_flaggems.builtin.benchmark import consts\n"
            "print(sorted(kernels.OPS))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert eval(proc.stdout.strip()) == sorted(EXPECTED_OPS)


@pytest.mark.parametrize("op", sorted(EXPECTED_OPS))
def test_compile_specs_are_complete(op):
    module = kernels.load(op)
    specs = module.COMPILE_SPECS
    assert specs
    for spec in specs:
        names = [p.name for p in spec.kernel.params]
        assert list(spec.signature) == names  # every parameter, in order
        for name, kind in spec.signature.items():
            assert (kind == "constexpr") == (name in spec.constexprs)
        assert set(spec.options) == {"num_warps", "num_stages"}
        assert spec.label.startswith(spec.dtype + "_")
        assert all(spec.signature[n] != "constexpr" for n in spec.divisible)
    # The specs cover every dtype the operator declares, and nothing else.
    assert sorted({s.dtype for s in specs}) == sorted(module.DTYPES)
    # Within one (label, kernel), variants differ (else their dump names would clash).
    keys = [(s.label, s.name, repr(sorted(s.variant_key().items()))) for s in specs]
    assert len(keys) == len(set(keys))


def test_gemm_specs_cover_every_autotune_config_per_dtype():
    mm = kernels.load("mm")
    for dtype in mm.DTYPES:
        got = [(s.constexprs, s.options) for s in mm.COMPILE_SPECS if s.dtype == dtype]
        want = [({"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, **c.kwargs},
                 {"num_warps": c.num_warps, "num_stages": c.num_stages}) for c in mm.CONFIGS]
        assert got == want
    assert mm.mm_kernel.keys == ["M", "N", "K"]  # the autotune key the benchmark sees


def test_float32_gemm_states_no_dot_precision():
    import ast

    tree = ast.parse(kernels.load("mm_f32").mm_f32_kernel.src)
    dots = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "dot"]
    assert len(dots) == 1
    assert len(dots[0].args) == 2 and dots[0].keywords == []  # TRITON_F32_DEFAULT decides


def test_unit_strides_and_aligned_ints_mirror_the_launcher():
    spec = kernels.load("mm").COMPILE_SPECS[0]
    assert spec.constexprs["stride_ak"] == 1 and spec.signature["stride_ak"] == "constexpr"
    assert set(spec.divisible) == {"a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am",
                                   "stride_bk", "stride_cm"}
    assert spec.attrs()[(0,)] == [["tt.divisibility", 16]]


# -- listing ------------------------------------------------------------------------------------


def test_list_ops_reads_the_packaged_benchmark_files():
    ops = {o.op: o for o in BuiltinSuiteProvider().list_ops(None)}
    assert set(ops) == EXPECTED_OPS
    assert ops["mm"].op_file == "mm" and ops["mm"].dtypes == ("float16", "bfloat16")
    assert ops["mm_f32"].dtypes == ("float32",)
    assert "tensor-core" in ops["mm"].kinds and "reduction" in ops["softmax"].kinds
    for op in ops.values():  # the listing and the kernels agree on dtypes
        assert op.dtypes == kernels.load(op.op).DTYPES


def test_list_ops_needs_the_op_mark_and_reads_literals(tmp_path):
    bench = tmp_path / "benchmark"
    bench.mkdir()
    (bench / "test_extra.py").write_text(
        "import pytest\nDTYPES = ('float16',)\nKINDS = ['x']\n"
        "@pytest.mark.alpha\ndef test_alpha():\n    pass\n"
        "def test_unmarked():\n    pass\n"
        "@pytest.mark.other\ndef test_beta():\n    pass\n")
    (bench / "test_broken.py").write_text("def test_(:\n")
    (ops,) = [read_benchmark_file(bench / "test_extra.py")]
    assert [(o.op, o.op_file, o.dtypes, o.kinds) for o in ops] == [("alpha", "extra", ("float16",), ("x",))]
    assert read_benchmark_file(bench / "test_broken.py") == []
    assert [o.op for o in BuiltinSuiteProvider().list_ops(str(tmp_path))] == ["alpha"]
    assert BuiltinSuiteProvider().list_ops(str(tmp_path / "nowhere")) == []


def test_the_suite_files_sit_where_pytest_imports_them_as_benchmark():
    # No __init__.py above benchmark/: pytest names the modules benchmark.*, as in FlagGems.
    assert (SUITE_DIR / "benchmark" / "__init__.py").is_file()
    assert not (SUITE_DIR / "__init__.py").exists()
    for name in ("conftest.py", "base.py", "consts.py", "core_shapes.yaml"):
        assert (SUITE_DIR / "benchmark" / name).is_file()
    assert (SUITE_DIR / "pytest.ini").is_file()


# -- FlagGems' table, byte for byte ------------------------------------------------------------


class _Size(tuple):
    """Prints like torch.Size without torch."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(d) for d in self)}])"


def test_result_table_matches_flaggems_printed_output():
    # Lines captured from FlagGems' own softmax run on the H200 (facts/device-h200.md).
    result = consts.BenchmarkResult(op_name="softmax", dtype="torch.float16", mode="kernel",
                                    level="core", result=[
        consts.BenchmarkMetrics(shape_detail=[_Size([1048576])], latency_base=0.238448,
                                latency=0.235136, speedup=0.238448 / 0.235136),
        consts.BenchmarkMetrics(shape_detail=[_Size([64, 64]), 1], latency_base=0.004672,
                                latency=0.036960, speedup=0.004672 / 0.036960),
    ])
    expected = (
        "\n"
        "Operator: softmax  Performance Test (dtype=torch.float16, mode=kernel,level=core)\n"
        "Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          Size Detail\n"
        "-----------------------------------------------------------------------------------------------\n"
        "SUCCESS               0.238448            0.235136               1.014          [torch.Size([1048576])]\n"
        "SUCCESS               0.004672            0.036960               0.126          [torch.Size([64, 64]), 1]\n"
    )
    assert str(result) == expected


def test_failed_rows_print_na_and_optional_columns_follow_the_first_row():
    failed = consts.BenchmarkMetrics(shape_detail=[_Size([3])], error_msg="differs")
    plain = consts.BenchmarkResult(op_name="fake", dtype="torch.float32", mode="cudagraph",
                                   level="comprehensive", result=[failed])
    lines = str(plain).split("\n")
    assert lines[1] == ("Operator: fake  Performance Test (dtype=torch.float32, "
                        "mode=cudagraph,level=comprehensive)")
    assert lines[4] == ("FAILED" + " " * 21 + "N/A" + " " * 17 + "N/A" + " " * 17 + "N/A"
                        + " " * 10 + "[torch.Size([3])]")
    extra = consts.BenchmarkMetrics(shape_detail=None, latency_base=1.0, latency=0.5, speedup=2.0,
                                    tflops=12.3456, gbps_base=10.0, gbps=20.0)
    wide = str(consts.BenchmarkResult(op_name="x", dtype="d", mode="kernel", level="core", result=[extra]))
    header, dashes, row = wide.split("\n")[2:5]
    # Each label right-aligned in 20 (note the trailing space inside the GBPS labels), one
    # space between columns.
    assert header == " ".join([  # one literal per column
        "Status    ", "  Torch Latency (ms)", "   Gems Latency (ms)", "        Gems Speedup",
        "              TFLOPS", "         Torch GBPS ", "          Gems GBPS ", "         Size Detail"])
    assert dashes == "-" * (len(header) + 1)  # FlagGems counts the header's newline too
    assert row.endswith("2.000" + " " * 14 + "12.346" + " " * 14 + "10.000" + " " * 14 + "20.000"
                        + " " * 10 + "N/A")


def test_result_json_keeps_flaggems_fields():
    result = consts.BenchmarkResult(op_name="add", dtype="torch.float16", mode="kernel", level="core",
                                    result=[consts.BenchmarkMetrics(shape_detail=[_Size([4])], latency=1.0)])
    text = result.to_json()
    assert '"shape_detail": [[4]]' in text and '"error_msg": null' in text and '"legacy_shape": null' in text


def test_consts_imports_without_torch_and_groups_are_lazy():
    assert consts.DTYPE_GROUPS["FLOAT_DTYPES"] == ("float16", "float32", "bfloat16")
    assert consts.dtype_name("torch.bfloat16") == "bfloat16"
    with pytest.raises(AttributeError):
        consts.NO_SUCH_GROUP  # noqa: B018


# -- shape lookup (FlagGems' order) ---------------------------------------------------------------


class _Chain(base.UnaryReductionBenchmark):
    pass


def _bench(cls=_Chain, op="thing", **kw):
    return cls(op_name=op, torch_op=None, gems_op=lambda *a: None, dtypes=["float16"], **kw)


@pytest.fixture
def level(monkeypatch):
    def set_level(value):
        cfg = conftest.BenchConfig()
        cfg.bench_level = consts.BenchLevel(value)
        monkeypatch.setattr(conftest, "Config", cfg)
    set_level("core")
    return set_level


def test_set_shapes_prefers_op_name_then_class_chain_then_defaults(tmp_path, level):
    path = tmp_path / "shapes.yaml"
    path.write_text("thing: {shapes: [[1, 2]], shape_desc: 'A, B'}\n"
                    "UnaryReductionBenchmark: {shapes: [[7]], shape_desc: 'R'}\n"
                    "GenericBenchmark: {shapes: [[9]]}\n")
    bench = _bench()
    bench.set_shapes(str(path))
    assert (bench.shapes, bench.shape_desc, bench.shape_key) == ([(1, 2)], "A, B", "thing")
    other = _bench(op="other")
    other.set_shapes(str(path))
    assert (other.shapes, other.shape_desc, other.shape_key) == ([(7,)], "R", "UnaryReductionBenchmark")
    path.write_text("Unrelated: {shapes: [[5]]}\n")
    fallback = _bench(op="other")
    fallback.set_shapes(str(path))
    assert fallback.shapes == list(base.Benchmark.DEFAULT_SHAPES) and fallback.shape_key is None
    with pytest.raises(FileNotFoundError, match="does not exist"):
        fallback.set_shapes(str(tmp_path / "missing.yaml"))


def test_comprehensive_level_adds_more_shapes_without_duplicates(tmp_path, level):
    path = tmp_path / "shapes.yaml"
    path.write_text("thing: {shapes: [[10000, 256], [3]]}\n")
    level("comprehensive")
    bench = _bench()
    bench.set_shapes(str(path))
    assert bench.shapes == [(10000, 256), (3,), (1024, 65536)]


def test_packaged_core_shapes_resolve_for_every_benchmark_class(level):
    shape_file = conftest.DEFAULT_SHAPE_FILE
    cases = {
        (base.BlasBenchmark, "mm"): "BlasBenchmark", (base.BlasBenchmark, "mm_f32"): "mm_f32",
        (base.NormBenchmark, "layer_norm"): "NormBenchmark",
        (base.UnaryReductionBenchmark, "softmax"): "UnaryReductionBenchmark",
        (base.BinaryPointwiseBenchmark, "add"): "Benchmark",
        (base.UnaryPointwiseBenchmark, "gelu"): "Benchmark",
    }
    for (cls, op), key in cases.items():
        kw = {"input_fn": lambda *a: iter(())} if cls is base.BlasBenchmark else {}
        bench = _bench(cls, op, **kw)
        bench.set_shapes(shape_file)
        assert bench.shape_key == key, op
        assert bench.shapes and all(isinstance(s, tuple) for s in bench.shapes)
    blas = _bench(base.BlasBenchmark, "mm", input_fn=lambda *a: iter(()))
    blas.set_shapes(shape_file)
    assert all(len(s) == 4 for s in blas.shapes) and blas.shape_desc == "B, M, N, K"


def test_the_compile_specs_classes_are_shapes_the_benchmark_runs(level):
    # Compile-only compiles representative classes; they must be real core shapes.
    bench = _bench(base.UnaryReductionBenchmark, "softmax")
    bench.set_shapes(conftest.DEFAULT_SHAPE_FILE)
    rows = {s[-1] for s in bench.shapes}
    assert {4096, 1 << 20} <= rows
    norm = _bench(base.NormBenchmark, "layer_norm")
    norm.set_shapes(conftest.DEFAULT_SHAPE_FILE)
    assert {4096, 6 * 65536} <= {int(__import__("math").prod(s[1:])) for s in norm.shapes}
    softmax = kernels.load("softmax")
    assert softmax.launch_meta(4096)[0] is softmax.softmax_row_kernel
    assert softmax.launch_meta(1 << 20)[0] is softmax.softmax_loop_kernel


# -- the provider --------------------------------------------------------------------------------


def _request(tmp_path, spec="softmax", **kw):
    out = tmp_path / "cell"
    out.mkdir(exist_ok=True)
    fields = {"op": OpSpec.parse(spec), "backend": CUDA, "out_dir": out, "python": sys.executable}
    fields.update(kw)
    return CellRequest(**fields)


def _check(provider, request) -> str:
    with pytest.raises(PreflightError) as info:
        provider.preflight(request)
    assert str(info.value).startswith(f"PREFLIGHT_FAILED check={info.value.check} ")
    assert "\n" not in str(info.value)
    return info.value.check


def test_preflight_names_each_failed_check(tmp_path):
    p = BuiltinSuiteProvider()
    assert _check(p, _request(tmp_path, "conv2d")) == "benchmark_file"
    assert _check(p, _request(tmp_path, "softmax2:softmax")) == "test_function"
    assert _check(p, _request(tmp_path, test_node="benchmark/test_mm.py::test_nothing")) == "test_function"
    assert _check(p, _request(tmp_path, shape_file=tmp_path / "nope.yaml")) == "shape_file"
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("- just\n- a list\n")
    assert _check(p, _request(tmp_path, shape_file=bad_yaml)) == "shape_file"
    assert _check(p, _request(tmp_path, replay_from=tmp_path / "nowhere")) == "replay_dir"
    assert _check(p, _request(tmp_path, autotune_mode="replay")) == "replay_dir"
    assert _check(p, _request(tmp_path, level="full")) == "bench_level"
    assert _check(p, _request(tmp_path, source=str(tmp_path))) == "suite_dir"
    assert _check(p, _request(tmp_path, python=str(tmp_path / "no-python"))) == "interpreter"


def test_compile_only_preflight(tmp_path):
    p = BuiltinSuiteProvider()
    p.preflight(_request(tmp_path, "mm", compile_only=True, target="cuda:90"))  # triton is here
    assert _check(p, _request(tmp_path, "mm", compile_only=True, target="cuda:sm90")) == "target"
    assert _check(p, _request(tmp_path, "mm", compile_only=True, target="cuda:90",
                              shape_file=SUITE_DIR / "benchmark" / "core_shapes.yaml")) == "shape_file"
    # A suite copy with an operator that has no kernels module.
    suite = tmp_path / "suite"
    shutil.copytree(SUITE_DIR / "benchmark", suite / "benchmark")
    shutil.copy(SUITE_DIR / "pytest.ini", suite / "pytest.ini")
    (suite / "benchmark" / "test_extra.py").write_text(
        "import pytest\n@pytest.mark.extra\ndef test_extra():\n    pass\n")
    assert _check(p, _request(tmp_path, "extra", compile_only=True, target="cuda:90",
                              source=str(suite))) == "compile_specs"


def test_device_preflight_needs_torch(tmp_path):
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("torch is installed here; the missing-torch message cannot be shown")
    p = BuiltinSuiteProvider()
    with pytest.raises(PreflightError) as info:
        p.preflight(_request(tmp_path))
    assert info.value.check == "interpreter"
    assert "torch" in info.value.detail and sys.executable in info.value.detail


def test_device_cell_command_isolates_pytest_and_loads_the_plugins(tmp_path):
    p = BuiltinSuiteProvider()
    shape_file = tmp_path / "shapes.yaml"
    shape_file.write_text("softmax: {shapes: [[8, 8]]}\n")
    request = _request(tmp_path, "softmax:softmax:float16,bfloat16", shape_file=shape_file,
                       autotune_mode="record", level="comprehensive")
    command = p.cell_command(request)
    plan = plugin_order.plan(CUDA, autotune_mode="record", timer="auto")
    argv = list(command.argv)
    assert argv[:8] == [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                        "-c", str(SUITE_DIR / "pytest.ini"), "--rootdir"]
    assert argv[8] == str(SUITE_DIR) and argv[9] == "-s"
    for module in plan.modules:
        assert argv[argv.index(module) - 1] == "-p"
    tail = argv[argv.index("benchmark/test_softmax.py::test_softmax"):]
    assert tail == ["benchmark/test_softmax.py::test_softmax", "--level", "comprehensive",
                    "--mode", "kernel", "--dtypes", "float16", "--dtypes", "bfloat16",
                    "--shape_file", str(shape_file.resolve())]
    assert command.cwd == SUITE_DIR
    assert command.env["PYTEST_ADDOPTS"] == "" and command.env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert command.env["ZL_SHAPE_MODE"] == f"file:{shape_file.resolve()}"
    ident = command.identity
    assert ident["provider"] == "builtin" and ident["provider_commit"]
    assert ident["shape_mode"] == f"file:{shape_file.resolve()}" and ident["timer"] == "graph"
    plain = p.cell_command(_request(tmp_path, "mm"))
    assert plain.identity["shape_mode"] == "builtin" and "--shape_file" not in plain.argv
    assert plain.env["ZL_SHAPE_FILE"] == ""


def test_the_wheel_ships_the_whole_suite():
    hatchling_wheel = pytest.importorskip("hatchling.builders.wheel")
    package = Path(__file__).resolve().parents[1] / "packages" / "zl-flaggems"
    builder = hatchling_wheel.WheelBuilder(str(package))
    shipped = {f.distribution_path for f in builder.recurse_included_files()}
    source = package / "src" / "zl_flaggems" / "builtin"
    suite = {p.relative_to(package / "src").as_posix() for p in source.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    assert {"zl_flaggems/builtin/pytest.ini", "zl_flaggems/builtin/benchmark/core_shapes.yaml",
            "zl_flaggems/builtin/benchmark/test_mm.py", "zl_flaggems/builtin/kernels/mm.py",
            "zl_flaggems/cell/compile_only.py"} <= shipped
    assert suite <= shipped
