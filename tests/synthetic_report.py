"""A synthetic A/B rounds report model of any size, in the form docs/report-json.md describes.

Used by the browser test (a 1,000-operator page must load, sort and filter) and by
``python tests/synthetic_report.py N OUT.html`` for the page size stated in the docs.
Deterministic: operator k's numbers depend on k only.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

VERDICTS = ("FASTER", "SLOWER", "NO_CHANGE", "INCONCLUSIVE", "MIXED")
ROUNDS = 6
SHAPES = 5
CHANGED_EVERY = 10  # one operator in ten has a changed GEMM-like kernel with a diff excerpt
DIFF_LINES = 120


def _ir(k: int) -> dict:
    changed = k % CHANGED_EVERY == 0
    lines = [f"@@ -{i},3 +{i},3 @@" if i % 10 == 0 else
             (f"-    %dot_{k:05x}{i} = ttng.warp_group_dot %a, %b : tensor<128x128xf32, #mma>" if i % 2
              else f"+    %dot_{k:05x}{i} = tt.dot %a, %b : tensor<128x128xf32, #mma>")
             for i in range(DIFF_LINES)] if changed else []
    group = {"kernel": f"op{k}_kernel", "lines": ["ops removed: ttng.warp_group_dot x1"] if changed
             else ["layout blocked: sizePerThread [1, 4] -> [1, 8]"],
             "files": [f"float16/op{k}_kernel/default.ttgir"], "shapes": ["float16"],
             "variants": ["default"], "of_variants": 1, "launch": ["num_warps=4 num_stages=3"],
             "configs": [], "change": {"status": "changed"},
             "diff": {"file": f"float16/op{k}_kernel/default.ttgir", "lines": lines,
                      "total_lines": 211} if changed else None}
    return {"raw_equal": False, "canonical_equal": False, "files_a": 1, "files_b": 1,
            "counts": {"changed": 1}, "headline": f"1 of 1 variant(s) changed in 1 kernel(s): op{k}_kernel",
            "groups": [group], "raw_only": False,
            "lines": ["1 of 1 variant(s) changed in 1 kernel(s)", *group["lines"]]}


def rounds_model(n_ops: int, *, seed: int = 7) -> dict:
    rng = random.Random(seed)
    rows, operators = [], []
    for k in range(n_ops):
        op = f"op{k:04d}"
        verdict = VERDICTS[k % len(VERDICTS)]
        base = {"FASTER": 4.0, "SLOWER": -4.0}.get(verdict, 0.0)
        medians = []
        for s in range(SHAPES):
            deltas = [base + rng.gauss(0, 1.0) for _ in range(ROUNDS)]
            ordered = sorted(deltas)
            med = (ordered[2] + ordered[3]) / 2
            medians.append(med)
            rows.append({"op": op, "control": False, "dtype": "float16", "size_detail": f"[{64 << s}]",
                         "occurrence": 0, "shape": f"float16 [{64 << s}]",
                         "rounds": [f"r{r + 1:02d}" for r in range(ROUNDS)],
                         "a_ms": [1.0] * ROUNDS, "b_ms": [1.0] * ROUNDS, "deltas_pct": deltas,
                         "segment": "main", "timer": "graph", "verdict": verdict, "counted": True,
                         "stats": {"n": ROUNDS, "deltas_pct": deltas, "median_delta_pct": med,
                                   "estimate_pct": (ordered[0] + ordered[-1]) / 2, "ci_low_pct": ordered[0],
                                   "ci_high_pct": ordered[-1], "min_delta_pct": ordered[0],
                                   "max_delta_pct": ordered[-1], "sign_agree": ROUNDS, "a_spread_pct": 0.5,
                                   "b_spread_pct": 0.5, "verdict": verdict},
                         "reason": "", "drift_rounds": [], "drift_check": None})
        operators.append({"op": op, "control": False, "rounds": ROUNDS, "verdict": verdict,
                          "text": f"{verdict.lower()} on {SHAPES} shapes",
                          "operator": {"median_of_medians_pct": sorted(medians)[SHAPES // 2],
                                       "range_of_round_medians": [min(medians), max(medians)]},
                          "round_median_deltas_pct": {}, "median_side_noise_pct": 0.5,
                          "sign_changed_shapes": 0, "n_shapes": SHAPES, "counted_shapes": SHAPES,
                          "fallback_shapes": 0, "incomplete_shapes": 0, "timer": "graph",
                          "flagged_rounds": [], "drift_check": None, "notes": [], "ir": _ir(k)})
    cells, t = [], 0.0
    for o in operators[:50]:
        for r in range(ROUNDS):
            for side in ("A", "B"):
                cells.append({"cell": f"{o['op']}/r{r + 1:02d}/{side}", "op": o["op"], "round": str(r + 1),
                              "side": side, "start": t, "end": t + 20.0})
                t += 21.0
    series = {name: [[float(i * 10), v + 20 * ((i // 7) % 2)] for i in range(int(t / 10))]
              for name, v in (("sm_clock_mhz", 1900.0), ("power_w", 450.0), ("temp_c", 50.0))}
    summary = {"campaign": "runs/ab_SYNTHETIC", "switch": "DISABLE_MMA_V3", "a_value": "0",
               "b_value": "1", "rounds": ROUNDS, "threshold_pct": 1.0, "operators": operators,
               "no_report": [{"op": "op_broken", "reason": "r02/B failed (rc=1)"}],
               "skipped": [{"op": "op_same", "reason": "SWITCH_NO_IR_DIFF"}],
               "controls": {"ops": ["op_ctrl"], "aa": False, "called": 1, "total": 20, "rate": 0.05,
                            "text": "false-positive rate on this campaign's controls: 1/20"},
               "drift": {"telemetry": True, "flagged_cells": [], "rule": "synthetic"},
               "device_time": {"total_s": t, "per_op": {}, "text": f"device time used: {t:.0f}s"},
               "timeline": {"t0": 0.0, "devices": {"0": series}, "cells": cells}}
    return {"schema": 1, "kind": "rounds", "title": f"A/B rounds DISABLE_MMA_V3: synthetic, {n_ops} operators",
            "caliber": {"fields": [], "common": {"backend": "cuda"}, "differs": [], "cells": {}},
            "caliber_problems": [], "caliber_warnings": [], "rows": rows, "summary": summary,
            "notes": ["synthetic campaign"]}


def screen_model(n_ops: int) -> dict:
    """A screen in which every operator's IR changed (the largest pull-request form)."""
    rows = []
    for k in range(n_ops):
        low, high = -2.0 - k % 7, 1.0 + k % 5
        rows.append({"op": f"op{k:04d}", "op_file": f"op{k:04d}", "dtypes": ["float16"],
                     "verdict": "IR_CHANGED", "rows_a": SHAPES, "rows_b": SHAPES, "kernels_a": 1,
                     "kernels_b": 1, "convert_layouts_a": 2, "convert_layouts_b": 1,
                     "convert_layouts_all_a": 3, "convert_layouts_all_b": 2, "timed_out": False,
                     "notes": "", "ir": _ir(k),
                     "delta": {"label": "A/B delta (one pair)", "min_pct": low, "max_pct": high,
                               "median_pct": (low + high) / 2}})
    summary = {"campaign": "runs/screen_SYNTHETIC", "switch": "DISABLE_MMA_V3", "a_value": "0",
               "b_value": "1", "compile_only": False, "target": None,
               "counts": {"IR_CHANGED": n_ops}, "ir_changed": [r["op"] for r in rows],
               "time_spent": None, "timeline": None}
    return {"schema": 1, "kind": "screen", "title": f"screen DISABLE_MMA_V3: synthetic, {n_ops} operators",
            "caliber": {"fields": [], "common": {"backend": "cuda"}, "differs": [], "cells": {}},
            "caliber_problems": [], "caliber_warnings": [], "rows": rows, "summary": summary,
            "notes": []}


if __name__ == "__main__":  # pragma: no cover - the docs' page-size figure
    from zl_report import render

    n, out = int(sys.argv[1]), Path(sys.argv[2])
    out.write_text(render(rounds_model(n), "html"), encoding="utf-8")
    print(f"{n} operators: {out.stat().st_size / 1e6:.2f} MB")
