"""Compile-only cells of the built-in suite: real Triton 3.6 compiles for sm90, no device.

The switch matrix runs every side as a real cell (``zl_core.cells.cell.run_cell`` with
the builtin provider: preflight, a fresh process with the side's environment,
``python -m zl_flaggems.cell.compile_only``), once per module, and compares the
fingerprints the screen would compare.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")

from zl_core import Backend, PluginHost
from zl_core.cells.cell import run_cell
from zl_core.interface.caliber import read_identity
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CellRequest
from zl_core.interface.ttgir_layout import read_index, summarize
from zl_flaggems.builtin import kernels
from zl_flaggems.builtin.kernels._spec import make_spec
from zl_flaggems.cell import compile_only
from zl_flaggems.common import compile_targets
from zl_flaggems.host.builtin_provider import BuiltinSuiteProvider

pytestmark = pytest.mark.slow

ALL_OPS = kernels.OPS
CUDA = Backend(name="cuda", aliases=("nvidia",), visibility_env_keys=("CUDA_VISIBLE_DEVICES",))
# side -> (environment overrides, operators compiled on that side)
SIDES = {
    "base": ({}, ALL_OPS),
    "mma_v3_off": ({"DISABLE_MMA_V3": "1"}, ("mm", "add", "softmax", "layer_norm")),
    "f32_ieee": ({"TRITON_F32_DEFAULT": "ieee"}, ("mm_f32", "mm")),
    "f32_tf32": ({"TRITON_F32_DEFAULT": "tf32"}, ("mm_f32", "mm")),
    "typo": ({"DISABLE_MMA_V33": "1"}, ALL_OPS),
}


def _clean_env() -> None:
    # The switches under test must come from each side's overrides only.
    for key in ("DISABLE_MMA_V3", "TRITON_F32_DEFAULT", "DISABLE_MMA_V33", "ZL_CELL_DIR"):
        os.environ.pop(key, None)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """Every (side, op) compiled once, as real cells, two at a time."""
    _clean_env()
    root = tmp_path_factory.mktemp("compile_only")
    provider, host = BuiltinSuiteProvider(), PluginHost()
    jobs = [(side, op, env) for side, (env, ops) in SIDES.items() for op in ops]

    def one(job):
        side, op, env = job
        request = CellRequest(op=OpSpec.parse(op), backend=CUDA, out_dir=root / side / op,
                              python=sys.executable, compile_only=True, target="cuda:90",
                              env=env, side=side, timeout_s=600)
        return (side, op), run_cell(host, provider, request)

    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        outcomes = dict(pool.map(one, jobs))
    failed = {k: (o.rc, (o.cell_dir / "run.log").read_text()[-2000:])
              for k, o in outcomes.items() if o.rc != 0}
    assert not failed, failed
    return {key: outcome.cell_dir for key, outcome in outcomes.items()}


def fingerprint(cell: Path) -> str | None:
    return summarize(cell / "ttgir").fingerprint


# -- the dump ----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ALL_OPS)
def test_every_spec_is_dumped_in_the_layout(sides, op):
    cell = sides[("base", op)]
    specs = kernels.load(op).COMPILE_SPECS
    files = sorted((cell / "ttgir").rglob("*.ttgir"))
    assert len(files) == len(specs)
    rows = read_index(cell / "ttgir")
    assert sorted(r.file for r in rows) == sorted(p.relative_to(cell / "ttgir").as_posix() for p in files)
    for row in rows:
        shape, kernel, _variant = row.file.split("/")
        assert (shape, kernel) == (row.shape, row.kernel)
        assert row.launches == 0  # compiled, never launched
        assert (cell / "ttgir" / row.file).read_text().startswith("#")
    assert {r.kernel for r in rows} == {s.name for s in specs}
    assert {r.shape for r in rows} == {s.label for s in specs}
    summary = summarize(cell / "ttgir")
    assert summary.fingerprint and summary.files == len(specs)


def test_autotune_configs_get_distinct_variant_names(sides):
    cell = sides[("base", "mm")]
    names = sorted(p.stem for p in (cell / "ttgir" / "float16_aligned" / "mm_kernel").glob("*.ttgir"))
    assert len(names) == len(kernels.load("mm").CONFIGS) == len(set(names))
    assert "BLOCK_K=64_BLOCK_M=128_BLOCK_N=256_num_stages=3_num_warps=8" in names


def test_results_and_identity_say_compile_only(sides):
    cell = sides[("base", "softmax")]
    results = json.loads((cell / "results.json").read_text())
    assert results["rows"] == [] and results["compile_only"] is True
    assert results["target"] == "cuda:90"
    assert len(results["compiles"]) == len(kernels.load("softmax").COMPILE_SPECS)
    assert all(c["seconds"] > 0 for c in results["compiles"])
    ident = read_identity(cell)
    assert ident["compile_only"] is True and ident["timer"] == "none"
    assert ident["target"] == "cuda:90" and ident["torch_version"] is None
    assert ident["device_name"] == "none (compile-only cuda:90)"
    assert ident["triton_version"] == triton.__version__
    assert ident["provider"] == "builtin" and ident["shape_mode"] == "builtin"
    assert ident["rc"] == 0


# -- what the switches do -------------------------------------------------------------------


def test_disable_mma_v3_changes_the_fp16_gemm_only(sides):
    assert fingerprint(sides[("base", "mm")]) != fingerprint(sides[("mma_v3_off", "mm")])
    for op in ("add", "softmax", "layer_norm"):
        assert fingerprint(sides[("base", op)]) == fingerprint(sides[("mma_v3_off", op)]), op


def test_disable_mma_v3_really_swaps_warp_group_dot_for_mma_v2(sides):
    on = sides[("base", "mm")] / "ttgir" / "float16_aligned" / "mm_kernel"
    off = sides[("mma_v3_off", "mm")] / "ttgir" / "float16_aligned" / "mm_kernel"
    for path in on.glob("*.ttgir"):
        assert "ttng.warp_group_dot" in path.read_text()
        assert "versionMajor = 3" in path.read_text()
        text_off = (off / path.name).read_text()
        assert "ttng.warp_group_dot" not in text_off and "versionMajor = 2" in text_off


def test_f32_default_reaches_the_float32_dot(sides):
    ieee, tf32 = fingerprint(sides[("f32_ieee", "mm_f32")]), fingerprint(sides[("f32_tf32", "mm_f32")])
    assert ieee != tf32
    assert tf32 == fingerprint(sides[("base", "mm_f32")])  # unset behaves like tf32


def test_f32_default_leaves_the_fp16_gemm_alone(sides):
    # The fp16/bf16 GEMM states its dot precision, so the float32 default is not
    # written into its TTGIR: the two switches reach different operators.
    ieee, tf32 = fingerprint(sides[("f32_ieee", "mm")]), fingerprint(sides[("f32_tf32", "mm")])
    assert ieee == tf32 == fingerprint(sides[("base", "mm")])
    text = next((sides[("f32_tf32", "mm")] / "ttgir").rglob("*.ttgir")).read_text()
    assert "inputPrecision" not in text


def test_a_misspelled_switch_changes_nothing(sides):
    for op in ALL_OPS:
        assert fingerprint(sides[("base", op)]) == fingerprint(sides[("typo", op)]), op


def test_cell_command_is_an_argv_without_a_shell(tmp_path):
    provider = BuiltinSuiteProvider()
    request = CellRequest(op=OpSpec.parse("mm:mm:float16"), backend=CUDA, out_dir=tmp_path,
                          python="/opt/py/bin/python", compile_only=True, target="hip:gfx942")
    command = provider.cell_command(request)
    assert command.argv == ("/opt/py/bin/python", "-m", "zl_flaggems.cell.compile_only", "--op", "mm",
                            "--target", "hip:gfx942", "--dtypes", "float16")
    assert command.cwd == tmp_path
    assert command.identity["compile_only"] is True and command.identity["timer"] == "none"
    assert command.identity["provider_commit"]


# -- the command line ---------------------------------------------------------------------------


def _run(args, env=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("ZL_")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "zl_flaggems.cell.compile_only", *args], env=full,
                          capture_output=True, check=False, text=True, timeout=300)


@pytest.mark.parametrize("text, expected", [
    ("cuda:90", ("cuda", 90, 32)), ("cuda:80", ("cuda", 80, 32)), ("CUDA:100", ("cuda", 100, 32)),
    ("hip:gfx942", ("hip", "gfx942", 64)), (" hip:gfx90a ", ("hip", "gfx90a", 64)),
])
def test_targets_parse(text, expected):
    assert compile_targets.parse_target(text) == expected


@pytest.mark.parametrize("text", ["cuda", "cuda:", "cuda:sm90", "cuda:9", "musa:22", "hip:942",
                                  "cuda:90;rm", ""])
def test_bad_targets_are_one_line_usage_errors(text):
    with pytest.raises(compile_targets.CompileOnlyError) as info:
        compile_targets.parse_target(text)
    assert info.value.code == compile_targets.EXIT_USAGE
    assert "\n" not in str(info.value) and "cuda:<sm>" in str(info.value)


def test_cli_usage_errors_exit_2_with_one_line(tmp_path):
    cases = [
        (["--op", "mm", "--target", "cuda:sm90", "--cell-dir", str(tmp_path / "a")], "bad target"),
        (["--op", "conv2d", "--cell-dir", str(tmp_path / "b")], "no built-in kernels for operator 'conv2d'"),
        (["--op", "mm", "--dtypes", "float32", "--cell-dir", str(tmp_path / "c")], "has no float32 kernels"),
        (["--op", "mm"], "set ZL_CELL_DIR or pass --cell-dir"),
    ]
    for args, words in cases:
        proc = _run(args)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], proc.stderr
    assert not (tmp_path / "a").exists()


def test_cli_reads_the_cell_contract_from_the_environment(tmp_path):
    cell = tmp_path / "cell"
    proc = _run(["--op", "add"], env={"ZL_CELL_DIR": str(cell), "ZL_TARGET": "cuda:80",
                                      "ZL_DTYPES": "bfloat16"})
    assert proc.returncode == 0, proc.stderr
    files = [p.relative_to(cell / "ttgir").as_posix() for p in (cell / "ttgir").rglob("*.ttgir")]
    assert files == ["bfloat16_aligned/add_kernel/default.ttgir"]
    text = (cell / "ttgir" / files[0]).read_text()
    assert 'ttg.target = "cuda:80"' in text
    assert read_identity(cell)["target"] == "cuda:80"


def test_missing_triton_exits_3_with_one_line(tmp_path):
    code = ("import sys; sys.modules['triton'] = None\n"
            "from zl_flaggems.cell.compile_only import main\n"
            f"sys.exit(main(['--op', 'add', '--cell-dir', {str(tmp_path)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False,
                          text=True, timeout=120)
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs triton" in lines[0] and sys.executable in lines[0]


@triton.jit
def _broken_kernel(x_ptr, BLOCK: triton.language.constexpr):
    offsets = triton.language.arange(0, BLOCK)  # BLOCK=3 is not a power of two
    triton.language.store(x_ptr + offsets, offsets)


def test_a_failing_compile_names_the_kernel_and_exits_1(tmp_path, monkeypatch, capsys):
    good = kernels.load("add").COMPILE_SPECS[0]
    bad = make_spec(_broken_kernel, types={"x_ptr": "*i32"}, constexprs={"BLOCK": 3},
                    options={"num_warps": 1}, label="float16_bad", dtype="float16")
    monkeypatch.setattr(compile_only, "select_specs", lambda op, dtypes: [good, bad])
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    rc = compile_only.main(["--op", "add", "--cell-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert len(err) == 1 and "_broken_kernel [float16_bad] failed for cuda:90" in err[0]
    assert "power of 2" in err[0] or "power of two" in err[0]
    # The good variant is still dumped and the failure recorded.
    assert [r.kernel for r in read_index(tmp_path / "ttgir")] == ["add_kernel"]
    assert json.loads((tmp_path / "results.json").read_text())["failed_compiles"] == [err[0]]
    assert "TRITON_CACHE_DIR" not in os.environ  # the throwaway cache was not left behind
