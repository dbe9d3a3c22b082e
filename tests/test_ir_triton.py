"""The IR summary and ``zl diff`` on TTGIR that real Triton 3.6 compiles for sm_90 on this CPU.

A screen-shaped campaign folder is built from compile-only cells (the built-in mm
and add, side B under DISABLE_MMA_V3=1), the way ``zl screen --compile-only``
lays them out; the kernels compiled twice come from two source files that differ
in paths, line numbers and variable names only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from report_helpers import zl
from zl_core.ir import compare_cells, unified_diff
from zl_core.ir.rollup import operator_lines

triton = pytest.importorskip("triton")

pytestmark = pytest.mark.slow


def compile_cell(cell: Path, op: str, **env: str) -> None:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ZL_") and k != "DISABLE_MMA_V3"}
    full.update(env)
    proc = subprocess.run([sys.executable, "-m", "zl_flaggems.cell.compile_only", "--op", op,
                           "--dtypes", "float16", "--target", "cuda:90", "--cell-dir", str(cell)],
                          env=full, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs") / "screen_DISABLE_MMA_V3_20261203-060000"
    root.mkdir()
    (root / "campaign.json").write_text(json.dumps({
        "schema": 1, "kind": "screen", "switch": "DISABLE_MMA_V3", "a_value": "0", "b_value": "1",
        "backend": "cuda", "ops": ["mm", "add"], "compile_only": True, "target": "cuda:90"}))
    for op in ("mm", "add"):
        compile_cell(root / op / "A", op)
        compile_cell(root / op / "B", op, DISABLE_MMA_V3="1")
    return root


def test_mma_v3_off_names_warp_group_dot_removed_and_the_mma_version(campaign):
    cmp = compare_cells(campaign / "mm" / "A", campaign / "mm" / "B")
    assert cmp.raw_equal is False and cmp.canonical_equal is False
    lines = operator_lines(cmp)
    removed = next(line for line in lines if line.startswith("ops removed:"))
    assert "ttng.warp_group_dot x" in removed
    assert "tt.dot x" in next(line for line in lines if line.startswith("ops added:"))
    assert any(line.startswith("layout nvidia_mma versionMajor 3 -> 2 (") for line in lines)
    for group in cmp.groups:  # every variant of the GEMM moved, each says so itself
        assert group.kernel == "mm_kernel" and group.shapes == ("float16_aligned",)
        assert any(line.startswith("layout nvidia_mma: versionMajor 3 -> 2") for line in group.lines)
        assert group.launch and group.launch[0].startswith("num_warps=")
    assert sum(len(g.files) for g in cmp.groups) == cmp.files_a == cmp.files_b >= 2


def test_a_kernel_the_switch_does_not_touch_has_no_change(campaign):
    cmp = compare_cells(campaign / "add" / "A", campaign / "add" / "B")
    assert cmp.raw_equal and cmp.canonical_equal and operator_lines(cmp) == []
    (rel,) = [p.relative_to(campaign / "add" / "A" / "ttgir").as_posix()
              for p in (campaign / "add" / "A" / "ttgir").rglob("*.ttgir")]
    assert unified_diff(campaign / "add" / "A", campaign / "add" / "B", rel) == []


SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    {pid} = tl.program_id(0)
    {offs} = {pid} * BLOCK + tl.arange(0, BLOCK)
    mask = {offs} < n
    tl.store(out_ptr + {offs}, tl.load(x_ptr + {offs}, mask=mask) * 2.0, mask=mask)
'''


def _compile_from(path: Path, padding: int, pid: str, offs: str) -> str:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    path.parent.mkdir(parents=True)
    path.write_text("\n" * padding + textwrap.dedent(SOURCE.format(pid=pid, offs=offs)))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    src = ASTSource(fn=module.scale_kernel, signature=sig, constexprs={"BLOCK": 1024})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["ttgir"]


def test_an_unchanged_kernel_compiled_twice_has_an_empty_canonical_diff(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    first = _compile_from(tmp_path / "one" / "kmod_one.py", 0, "pid", "offs")
    second = _compile_from(tmp_path / "two" / "kmod_two.py", 7, "program", "offsets")
    assert first != second  # paths, lines and value names differ in the raw text
    assert "%offsets" in second and "%offs " in first
    for side, text in (("A", first), ("B", second)):
        kernel = tmp_path / side / "ttgir" / "n1024" / "scale_kernel"
        kernel.mkdir(parents=True)
        (kernel / "default.ttgir").write_text(text)
    cmp = compare_cells(tmp_path / "A", tmp_path / "B")
    assert cmp.raw_equal is False and cmp.canonical_equal is True
    assert unified_diff(tmp_path / "A", tmp_path / "B", "n1024/scale_kernel/default.ttgir") == []
    assert "only names and source locations changed" in cmp.headline()


# -- zl diff ------------------------------------------------------------------------------------


def test_zl_diff_prints_the_summary_then_the_diff_on_request(campaign, capsys):
    assert zl(["diff", campaign, "mm"]) == 0
    out = capsys.readouterr().out
    assert "ops removed: ttng.warp_group_dot x" in out
    assert "layout nvidia_mma versionMajor 3 -> 2" in out
    assert "shapes: float16_aligned" in out and "compiled with: num_warps=" in out
    assert f"zl diff {campaign} mm --full" in out and "\n@@ " not in out

    assert zl(["diff", campaign.name, "mm", "--kernel", "mm_kernel", "--full",
               "--runs-root", campaign.parent]) == 0
    full = capsys.readouterr().out
    assert "\n--- A/float16_aligned/mm_kernel/" in full and "\n@@ " in full
    assert "\n-" in full and "ttng.warp_group_dot" in full and "loc(" not in full
    assert any(line.startswith("+") and "tt.dot" in line for line in full.splitlines())


def test_zl_diff_of_an_unchanged_operator_says_so(campaign, capsys):
    assert zl(["diff", campaign, "add", "--full"]) == 0
    out = capsys.readouterr().out
    assert "identical TTGIR" in out and "@@" not in out


@pytest.mark.parametrize("args, words", [
    (["no_such_campaign", "mm"], "no campaign 'no_such_campaign'"),
    (["{c}", "conv2d"], "no operator 'conv2d' in screen_DISABLE_MMA_V3_20261203-060000; its operators: add, mm"),
    (["{c}", "mm", "--kernel", "nope"], "operator 'mm' has no kernel 'nope'; its kernels: mm_kernel"),
    (["{c}", "../mm"], "'../mm' is not an operator name"),
])
def test_zl_diff_bad_input_is_one_line_and_exit_2(campaign, capsys, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    code = zl(["diff", *(a.format(c=campaign) for a in args)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_zl_diff_reads_round_1_of_an_ab_campaign(campaign, tmp_path, capsys):
    import shutil

    ab = tmp_path / "ab_DISABLE_MMA_V3_20261203-070000"
    for side in ("A", "B"):
        shutil.copytree(campaign / "mm" / side, ab / "mm" / "r01" / side)
    (ab / "campaign.json").write_text(json.dumps({"schema": 1, "kind": "ab", "ops": ["mm"]}))
    assert zl(["diff", ab, "mm"]) == 0
    out = capsys.readouterr().out
    assert "A=mm/r01/A B=mm/r01/B" in out and "ops removed: ttng.warp_group_dot x" in out


# -- the joined reports ----------------------------------------------------------------------------


def _screen_json(root: Path, verdicts: dict) -> None:
    (root / "screen.json").write_text(json.dumps({"schema": 1, "ops": [
        {"op": op, "op_file": op, "dtypes": "float16", "verdict": v, "rows_a": 0, "rows_b": 0,
         "kernels_a": 1, "kernels_b": 1, "convert_layouts_a": 0, "convert_layouts_b": 0,
         "ttgir_files_a": 1, "ttgir_files_b": 1, "timed_out": 0, "notes": ""}
        for op, v in verdicts.items()]}))


def test_the_screen_report_carries_each_operators_ir_change(campaign):
    from zl_core.report import build
    from zl_report import render

    _screen_json(campaign, {"mm": "IR_CHANGED", "add": "NO_IR_DIFF"})
    model = build(campaign, allow_mismatch=True)  # bare compile-only cells, not full campaign cells
    rows = {r["op"]: r for r in model["rows"]}
    assert rows["add"]["ir"]["raw_equal"] is True and rows["add"]["ir"]["lines"] == []
    ir = rows["mm"]["ir"]
    assert ir["raw_equal"] is False and ir["raw_only"] is False
    assert any("ttng.warp_group_dot" in line for line in ir["lines"])
    assert ir["groups"][0]["diff"]["lines"][0].startswith("--- A/float16_aligned/mm_kernel/")
    md = render(model, "md")
    # every operator's verdict leads; only the changed ones have a section
    assert "| mm | IR_CHANGED |" in md and "| add | NO_IR_DIFF |" in md
    assert "## mm: IR_CHANGED" in md and "## add" not in md
    assert "ops removed: ttng.warp_group_dot" in md and "<details><summary>canonical diff" in md
    html = render(model, "html")
    assert 'id="op-mm"' in html and '<a href="#op-mm">mm</a>' in html and "<details>" in html
    assert 'class="d">-' in html  # removed lines coloured in the folded diff


def test_a_names_only_change_is_said_in_the_screen_report(tmp_path, monkeypatch):
    from zl_core.report import build

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "screen_X_20261203-080000"
    first = _compile_from(tmp_path / "one" / "kmod_a.py", 0, "pid", "offs")
    second = _compile_from(tmp_path / "two" / "kmod_b.py", 3, "program", "offsets")
    for side, text in (("A", first), ("B", second)):
        kernel = root / "scale" / side / "ttgir" / "n1024" / "scale_kernel"
        kernel.mkdir(parents=True)
        (kernel / "default.ttgir").write_text(text)
    (root / "campaign.json").write_text(json.dumps({"schema": 1, "kind": "screen", "switch": "X",
                                                    "compile_only": True, "ops": ["scale"]}))
    _screen_json(root, {"scale": "IR_CHANGED"})
    model = build(root, allow_mismatch=True)  # hand-made cells carry no identity
    assert model["rows"][0]["ir"]["raw_only"] is True
    assert any(n.startswith("scale: raw TTGIR differs but canonical TTGIR does not") for n in model["notes"])
