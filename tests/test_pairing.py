"""Pairing A rows with B rows: by (dtype, size_detail, occurrence); fallbacks kept apart."""

from __future__ import annotations

import pytest
from zl_core.decisions.pairing import (
    FAILED,
    FALLBACK,
    MIXED_TIMER,
    OK,
    ONLY_A,
    ONLY_B,
    count_classes,
    pair_rows,
)
from zl_core.interface.rows import Row


def row(size, gems, *, dtype="float16", status="SUCCESS", timer="graph", fallback=False):
    return Row(op="mm", dtype=dtype, size_detail=size, latency_ms=gems,
               extra=(("torch_latency_ms", 1.0),), status=status, timer=timer, fallback=fallback, source="results.json")


def test_repeated_shape_pairs_by_occurrence_in_printed_order():
    a = [row("[4096]", 2.0), row("[8]", 1.0), row("[4096]", 4.0)]
    b = [row("[4096]", 1.0), row("[4096]", 5.0), row("[8]", 1.0)]
    pairs = {p.key: p for p in pair_rows(a, b)}
    assert pairs[("float16", "[4096]", 0)].delta_pct == pytest.approx(100.0)  # 2.0 vs 1.0
    assert pairs[("float16", "[4096]", 1)].delta_pct == pytest.approx(-20.0)  # 4.0 vs 5.0
    assert pairs[("float16", "[8]", 0)].delta_pct == pytest.approx(0.0)


def test_sign_convention_positive_means_b_faster():
    (p,) = pair_rows([row("[1]", 1.1)], [row("[1]", 1.0)])
    assert p.cls == OK and p.delta_pct == pytest.approx(10.0) and p.timer == "graph"


def test_dtype_is_part_of_the_key():
    pairs = pair_rows([row("[1]", 1.0, dtype="float16")], [row("[1]", 1.0, dtype="bfloat16")])
    assert [p.cls for p in pairs] == [ONLY_A, ONLY_B]


def test_only_success_on_both_sides_counts():
    pairs = pair_rows([row("[1]", 1.0), row("[2]", 1.0), row("[3]", 0.0)],
                      [row("[1]", 1.0, status="FAILED"), row("[2]", None), row("[3]", 1.0)])
    assert [p.cls for p in pairs] == [FAILED, FAILED, FAILED]
    assert all(p.delta_pct is None for p in pairs)


def test_fallback_and_timer_mismatch_are_kept_apart():
    a = [row("[1]", 1.0, timer="direct", fallback=True),
         row("[2]", 1.0, timer="direct", fallback=True),
         row("[3]", 1.0, timer="graph"),
         row("[4]", 1.0, timer=None),
         row("[5]", 1.0, timer="direct")]
    b = [row("[1]", 1.0, timer="direct", fallback=True),
         row("[2]", 1.0, timer="graph"),
         row("[3]", 1.0, timer="direct"),
         row("[4]", 1.0, timer=None),
         row("[5]", 1.0, timer="direct")]
    classes = [p.cls for p in pair_rows(a, b)]
    assert classes == [FALLBACK, MIXED_TIMER, MIXED_TIMER, MIXED_TIMER, OK]
    counts = count_classes(pair_rows(a, b))
    assert counts[OK] == 1 and counts[FALLBACK] == 1 and counts[MIXED_TIMER] == 3


def test_reasons_name_the_side():
    (p,) = pair_rows([row("[1]", 1.0)], [row("[1]", 1.0, timer="direct", fallback=True)])
    assert "side B" in p.reason
