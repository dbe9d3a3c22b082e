"""Layout-conversion counts scoped to what the timer measured (variants launched more than
the floor), with the unscoped totals and the variants left out beside them."""

from __future__ import annotations

from pathlib import Path

from test_campaign_engine import fake_spec, settings
from zl_core.campaigns.screen_campaign import run_screen
from zl_core.interface.opspec import OpSpec
from zl_core.interface.ttgir_layout import LAUNCH_FLOOR, IndexRow, summarize, write_index
from zl_core.report.screen_report import build_screen
from zl_report import render


def _cell(root: Path, variants: list[tuple[str, int | None, int]]) -> Path:
    """A cell's ttgir/ with (kernel, launches or None for unindexed, convert_layouts)."""
    ttgir = root / "ttgir"
    rows = []
    for kernel, launches, converts in variants:
        rel = f"64/{kernel}/default.ttgir"
        path = ttgir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("module {\n" + "  ttg.convert_layout\n" * converts + "}\n")
        if launches is not None:
            rows.append(IndexRow(shape="64", kernel=kernel, file=rel, launches=launches))
    write_index(ttgir, rows)
    return ttgir


def test_input_construction_is_left_out_and_named(tmp_path):
    ttgir = _cell(tmp_path, [("randn_kernel", 1, 4), ("fill_kernel", LAUNCH_FLOOR, 1),
                             ("gelu_kernel", 3795, 2), ("loser_kernel", 0, 5)])
    ir = summarize(ttgir)
    assert ir.scoped and ir.convert_layouts == 2 and ir.convert_layouts_all == 12
    assert {rel.split("/")[1]: (n, c) for rel, n, c in ir.unmeasured} == {
        "randn_kernel": (1, 4), "fill_kernel": (LAUNCH_FLOOR, 1), "loser_kernel": (0, 5)}


def test_a_dumped_file_the_index_does_not_list_is_kept(tmp_path):
    ttgir = _cell(tmp_path, [("timed_kernel", 300, 1), ("stray_kernel", None, 3)])
    ir = summarize(ttgir)
    assert ir.convert_layouts == 4 and ir.convert_layouts_all == 4 and not ir.unmeasured


def test_a_cell_that_launched_nothing_is_counted_whole(tmp_path):
    # A compile-only cell indexes its variants with 0 launches: nothing to scope by.
    ttgir = _cell(tmp_path, [("a_kernel", 0, 2), ("b_kernel", 0, 1)])
    ir = summarize(ttgir)
    assert not ir.scoped and ir.convert_layouts == 3 == ir.convert_layouts_all


def test_screen_does_not_credit_the_switch_with_input_construction(fake_host, tmp_path):
    ops = [OpSpec.parse("inputbuild"), OpSpec.parse("gemm")]
    campaign, rows = run_screen(fake_host, fake_spec(fake_host, ops, settings(), tmp_path))
    row = next(r for r in rows if r["op"] == "inputbuild")
    # The randn kernel lost its conversion under the switch; the timed kernel did not.
    assert row["verdict"] == "IR_CHANGED"
    assert (row["convert_layouts_a"], row["convert_layouts_b"]) == (1, 1)
    assert (row["convert_layouts_all_a"], row["convert_layouts_all_b"]) == (2, 1)
    assert row["launch_scope"] == f"launches>{LAUNCH_FLOOR}"
    assert row["unmeasured_a"] == "64/randn_kernel/default.ttgir (1 launch(es), 1 convert_layout)"
    assert row["unmeasured_b"] == ""
    gemm = next(r for r in rows if r["op"] == "gemm")
    assert (gemm["convert_layouts_a"], gemm["convert_layouts_all_a"]) == (1, 1)

    model = build_screen(campaign)
    ir = next(r for r in model["rows"] if r["op"] == "inputbuild")["ir"]
    assert "convert_layout in changed measured variants: 0 -> 0" in ir["lines"]
    assert any(line.startswith("convert_layout in all changed variants: 1 -> 0 (1 variant(s) "
                               f"launched at most {LAUNCH_FLOOR} times left out: randn_kernel")
               for line in ir["lines"])
    text = render(model, "text")
    assert "1/1 (all 2/1)" in text
    assert "inputbuild: convert_layout counts leave out variants launched at most" in text
