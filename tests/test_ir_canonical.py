"""Canonical TTGIR and the change summary on small hand-written modules (shapes of Triton 3.6 output)."""

from __future__ import annotations

import difflib

from zl_core.ir import canonical_ttgir, compare_texts, features, strip_locations
from zl_core.ir.canonical import canonical_symbol
from zl_core.ir.compare import CHANGED, NAMES_ONLY, SAME, layout_changes

MODULE = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#loc = loc("/src/k.py":3:0)
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#loc5 = loc("x_ptr"(#loc))
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k_kernel(%x_ptr: !tt.ptr<f16> loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc2)
    %offs = arith.addi %pid, %c1_i32 : i32 loc(callsite(#loc3 at #loc4))
    %buf = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable> loc(#loc6)
    %acc = ttng.warp_group_dot %a, %b, %c {inputPrecision = 0 : i32} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<64x128xf32, #mma> loc(#loc7)
    %r = "tt.reduce"(%offs) <{axis = 0 : i32}> ({
    ^bb0(%r_1: f32 loc(callsite(#loc1 at #loc74)), %r_2: f32 loc("a(b)"(#loc))):
      %s = arith.addf %r_1, %r_2 : f32 loc(#loc8)
      tt.reduce.return %s : f32 loc(#loc8)
    }) : (tensor<64xf32>) -> f32 loc(#loc8)
    %cv = ttg.convert_layout %acc : tensor<64x128xf32, #mma> -> tensor<64x128xf32, #blocked> loc(#loc9)
    tt.store %x_ptr, %offs : !tt.ptr<f16> loc(#loc10)
    tt.return loc(#loc11)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("/src/k.py":4:10)
"""


def renamed(text: str) -> str:
    """The same program: other variable names, other file, other line numbers."""
    return (text.replace("%offs", "%offsets").replace("%pid", "%program").replace("%r_1", "%q_7")
            .replace("/src/k.py", "/elsewhere/kernels/k.py").replace(":4:10", ":40:3")
            .replace("%x_ptr", "%inp"))


def test_locations_go_with_nested_parens_and_parens_in_strings():
    text = strip_locations(MODULE)
    assert "loc(" not in text and "#loc" not in text
    assert '%r_2: f32)' in text  # the string "a(b)" did not end the loc early
    assert text.count("\n") == MODULE.count("\n") - 4  # the four #loc definitions


def test_names_and_locations_only_compare_equal():
    other = renamed(MODULE)
    assert other != MODULE
    assert canonical_ttgir(other) == canonical_ttgir(MODULE)
    assert compare_texts(MODULE, other).status == NAMES_ONLY
    assert compare_texts(MODULE, MODULE).status == SAME


def test_a_swapped_operand_is_not_a_rename():
    swapped = MODULE.replace("arith.addi %pid, %c1_i32", "arith.addi %c1_i32, %pid")
    assert canonical_ttgir(swapped) != canonical_ttgir(MODULE)
    assert compare_texts(MODULE, swapped).status == CHANGED


def test_arguments_are_named_by_position():
    text = canonical_ttgir(MODULE)
    assert "@k_kernel(%arg0: !tt.ptr<f16>, %arg1: i32)" in text
    assert "tt.store %arg0," in text


def test_an_inserted_op_leaves_unrelated_names_alone():
    inserted = MODULE.replace("    %pid = tt.get_program_id",
                              "    %extra = arith.constant 7 : i32 loc(#loc1)\n    %pid = tt.get_program_id")
    diff = [line for line in difflib.unified_diff(canonical_ttgir(MODULE).splitlines(),
                                                  canonical_ttgir(inserted).splitlines(), lineterm="")
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    assert diff == ["+    %constant_" + diff[0].split("%constant_")[1]]
    assert "arith.constant 7 : i32" in diff[0]


def test_hash_like_symbol_segments_are_masked():
    assert canonical_symbol("_add_kernel_3fa2b9c1d0") == "_add_kernel_h"
    assert canonical_symbol("mm_kernel") == "mm_kernel"
    assert canonical_symbol("layer_norm_kernel_12345678") == "layer_norm_kernel_12345678"  # no letters
    assert canonical_ttgir(MODULE.replace("@k_kernel", "@k_kernel_0123abcd9f")) == canonical_ttgir(
        MODULE.replace("@k_kernel", "@k_kernel_9876fedc01"))


def test_features_read_ops_layouts_attrs_and_shared_memory():
    f = features(MODULE)
    assert f.ops["ttng.warp_group_dot"] == 1 and f.ops["tt.reduce"] == 1
    assert f.ops["tt.reduce.return"] == 1 and f.ops["arith.constant"] == 1
    assert f.convert_layouts == 1
    assert f.attrs == {"num-warps": "4", "num-ctas": "1", "threads-per-warp": "32", "target": "cuda:90"}
    assert f.shared_bytes == 3 * 64 * 64 * 2 and f.buffers == 3
    assert f.functions == ("k_kernel",)
    mma = next(e for e in f.encodings if e.short_kind == "nvidia_mma")
    assert dict(mma.params)["versionMajor"] == "3"


def test_mma_v3_to_v2_change_reads_as_a_reviewer_would():
    b = (MODULE.replace("versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]",
                        "versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 4], instrShape = [16, 8]")
         .replace("ttng.warp_group_dot %a", "tt.dot %a")
         .replace("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
                  "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>")
         .replace("3x64x64xf16", "2x64x64xf16")
         .replace('"ttg.num-warps" = 4', '"ttg.num-warps" = 8'))
    change = compare_texts(MODULE, b)
    assert change.ops_removed == {"ttng.warp_group_dot": 1} and change.ops_added == {"tt.dot": 1}
    lines = change.lines()
    assert "ops removed: ttng.warp_group_dot x1" in lines and "ops added: tt.dot x1" in lines
    assert ("layout nvidia_mma: versionMajor 3 -> 2, warpsPerCTA [4, 1] -> [1, 4], "
            "instrShape [16, 128, 16] -> [16, 8]") in lines
    assert any(line.startswith("layout #shared: nvmma_shared<") and "-> swizzled_shared<" in line
               for line in lines)
    assert "num-warps: 4 -> 8" in lines
    assert "shared memory (local_alloc): 24.0 KiB -> 16.0 KiB" in lines
    assert "pipeline buffers: 3 -> 2" in lines


def test_renumbered_aliases_are_not_layout_changes():
    a = features(MODULE).encodings
    # B gains one layout; the printer renumbers #blocked -> #blocked1.
    extra = "#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>\n"
    b = features(extra + MODULE.replace("#blocked =", "#blocked1 =")).encodings
    added = ("added #blocked = blocked<sizePerThread = [4], threadsPerWarp = [32], "
             "warpsPerCTA = [4], order = [0]>")
    assert layout_changes(a, b) == [added]
