"""Synthetic A/B rounds and screen report models of any size, in the form docs/report-json.md describes.

Used by the browser test (a 1,000-operator page must load, sort and filter) and by
``python tests/synthetic_report.py N OUT.html`` for the page size stated in the docs.
Deterministic: operator k's numbers depend on k only.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from zl_core import stats
from zl_core.report import SCHEMA
from zl_core.report.headline import geometric_mean, verdict_estimate

VERDICTS = ("FASTER", "SLOWER", "NO_CHANGE", "INCONCLUSIVE", "MIXED")
ROUNDS = 6
SHAPES = 5
CHANGED_EVERY = 10  # one operator in ten has a changed GEMM-like kernel with a diff excerpt
DIFF_LINES = 120
PROVENANCE = {"zl_versions": ["0.1.0"], "compiler_builds": ["3f2a9c1d0b7e"],
              "compilers": ["triton 3.6.0 commit 5b1e2c3d4f60"], "provider_commits": ["flaggems ed2508bcb5a0"],
              "drivers": ["580.159.04"], "hosts": ["synthetic"], "devices": ["NVIDIA H100 80GB HBM3"],
              "cells": 60, "first_started": "2026-12-06T08:36:18Z", "last_finished": "2026-12-06T09:47:26Z"}


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
    """Judged by the real statistics (``judge_campaign``), so every key a real rounds
    model has is here too, with the meaning it has there (checked against the JSON
    Schema in tests/test_report_schema.py)."""
    rng = random.Random(seed)
    plan = stats.Plan.fixed(ROUNDS, threshold_pct=1.0)
    order = stats.round_order(plan.round_order, range(1, ROUNDS + 1))
    latencies: dict[str, dict] = {}
    for k in range(n_ops):
        meant = VERDICTS[k % len(VERDICTS)]
        # (effect %, round-to-round spread %) that lead the judgement to the meant verdict
        effect, spread = {"FASTER": (4.0, 1.0), "SLOWER": (-4.0, 1.0), "NO_CHANGE": (0.0, 0.1),
                          "INCONCLUSIVE": (1.0, 2.0), "MIXED": (4.0, 1.0)}[meant]
        shapes = latencies[f"op{k:04d}"] = {}
        for s in range(SHAPES):
            a_base = 0.01 * (4 ** s)
            # MIXED operators: half their shapes faster, half slower.
            shape_effect = (effect if s % 2 else -effect) if meant == "MIXED" else effect
            shapes[("float16", f"[torch.Size([{64 << s}, {64 << s}])]", 0)] = {
                r + 1: (a := a_base * (1 + rng.gauss(0, 0.004)),
                        a / (1 + (shape_effect + rng.gauss(0, spread)) / 100))
                for r in range(ROUNDS)}
    verdict = stats.judge_campaign(latencies, order, plan)
    rows, operators = [], []
    for k, (op, shapes) in enumerate(latencies.items()):
        judged = verdict.operator(op)
        medians, counted = [], []
        for shape, key in zip(judged.shapes, shapes, strict=True):
            by_round = shapes[key]
            medians.append(shape.median_delta_pct)
            rows.append({"op": op, "control": False, "dtype": key[0], "size_detail": key[1],
                         "occurrence": 0, "shape": f"{key[0]} {key[1]}",
                         "rounds": [f"r{r:02d}" for r in by_round],
                         "a_ms": [a for a, _ in by_round.values()],
                         "b_ms": [b for _, b in by_round.values()],
                         "deltas_pct": list(shape.deltas_pct),
                         "a_within_pct": 0.3, "b_within_pct": 0.3,
                         "segment": "main", "timer": "graph", "verdict": shape.verdict,
                         "counted": True, "stats": shape.to_json(), "reason": "",
                         "drift_rounds": [], "drift_check": None})
            counted.append(shape.to_json())
        operator = judged.to_json()
        operator["median_of_medians_pct"] = sorted(medians)[SHAPES // 2]
        operator["range_of_round_medians"] = [min(medians), max(medians)]
        operators.append({"op": op, "control": False, "rounds": ROUNDS, "verdict": judged.verdict,
                          "text": judged.text, "operator": operator,
                          "estimate": verdict_estimate(operator, counted),
                          "round_median_deltas_pct": {}, "median_side_noise_pct": 0.5,
                          "median_within_cell_pct": 0.3,
                          "sign_changed_shapes": judged.sign_changed_shapes, "n_shapes": SHAPES,
                          "counted_shapes": SHAPES, "fallback_shapes": 0, "incomplete_shapes": 0,
                          "timer": "graph", "flagged_rounds": [], "drift_check": None, "notes": [],
                          "ir": _ir(k)})
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
               "b_value": "1", "a_env": {"DISABLE_MMA_V3": "0"}, "b_env": {"DISABLE_MMA_V3": "1"},
               "rounds": ROUNDS, "threshold_pct": 1.0, "plan": plan.to_json(),
               "round_orders": {f"r{r:02d}": o for r, o in order.items()},
               "fdr": {"level": verdict.fdr_level, "tested": verdict.tested,
                       "selected": verdict.selected, "text": verdict.fdr_text},
               "operators": operators,
               "no_report": [{"op": "op_broken", "reason": "r02/B failed (rc=1)"}],
               "skipped": [{"op": "op_same", "reason": "SWITCH_NO_IR_DIFF"}],
               "controls": {"ops": ["op_ctrl"], "aa": False, "called": 1, "total": 20, "rate": 0.05,
                            "text": "false-positive rate on this campaign's controls: 1/20"},
               "drift": {"telemetry": True, "flagged_cells": [], "ops_with_flagged_cells": [],
                         "unjudged_cells": [], "dependent_shapes": [], "dependent_operators": [],
                         "rule": "synthetic"},
               "device_time": {"total_s": t, "per_op": {}, "decided_shapes": 0, "counted_shapes": 0,
                               "s_per_decided_shape": None, "text": f"device time used: {t:.0f}s"},
               "timeline": {"t0": 0.0, "devices": {"0": series}, "cells": cells},
               "time_spent": None, "classes": None, "geomean": geometric_mean(rows),
               "provenance": PROVENANCE,
               "judged": {"then": None, "now": {"rules": plan.to_json()["rules"], "schema": SCHEMA,
                                                "threshold_pct": 1.0},
                          "changed_operators": [], "changed_shapes": [], "why": [],
                          "text": f"judged by rules {plan.to_json()['rules']}"}}
    return {"schema": SCHEMA, "kind": "rounds",
            "title": f"A/B rounds of DISABLE_MMA_V3: synthetic, {n_ops} operators",
            "caliber": {"fields": [], "common": {"backend": "cuda"}, "differs": [], "cells": {}},
            "caliber_problems": [], "caliber_warnings": [], "rows": rows, "summary": summary,
            "notes": ["synthetic campaign", verdict.fdr_text]}


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
               "b_value": "1", "a_env": {"DISABLE_MMA_V3": "0"}, "b_env": {"DISABLE_MMA_V3": "1"},
               "compile_only": False, "target": None, "threshold_pct": None,
               "counts": {"IR_CHANGED": n_ops}, "ir_changed": [r["op"] for r in rows],
               "time_spent": None, "timeline": None, "provenance": PROVENANCE}
    return {"schema": SCHEMA, "kind": "screen", "title": f"screen DISABLE_MMA_V3: synthetic, {n_ops} operators",
            "caliber": {"fields": [], "common": {"backend": "cuda"}, "differs": [], "cells": {}},
            "caliber_problems": [], "caliber_warnings": [], "rows": rows, "summary": summary,
            "notes": []}


if __name__ == "__main__":  # pragma: no cover - the docs' page-size figure
    from zl_report import render

    n, out = int(sys.argv[1]), Path(sys.argv[2])
    out.write_text(render(rounds_model(n), "html"), encoding="utf-8")
    print(f"{n} operators: {out.stat().st_size / 1e6:.2f} MB")
