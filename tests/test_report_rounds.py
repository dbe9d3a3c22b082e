"""``zl report`` on an A/B campaign: per-shape and per-operator verdicts over rounds."""

from __future__ import annotations

import json
import time

import pytest
from report_helpers import IDENTITY, zl
from zl_core.decisions.status import COLUMNS
from zl_core.report import build

T0 = 1_800_000_000.0
ROUNDS = 6
# Small deterministic jitter so rounds differ but never change sign.
JITTER = [0.002, -0.002, 0.0, 0.0, 0.001, -0.001]  # no trend left after the order term
# The spread of a graph-timed row's replays inside its cell, per side.
WITHIN_CELL = {"A": 0.04, "B": 0.06}




class Campaign:
    def __init__(self, root, **meta):
        self.root = root
        self.meta = {"schema": 1, "kind": "ab", "switch": "DISABLE_MMA_V3", "a_value": "0",
                     "b_value": "1", "a_env": {"DISABLE_MMA_V3": "0"},
                     "b_env": {"DISABLE_MMA_V3": "1"}, "backend": "cuda", "device": "0",
                     "rounds": ROUNDS, "aa": False, "controls": [], "threshold_pct": 1.0,
                     "ops": [], **meta}
        self.status = []
        root.mkdir(parents=True, exist_ok=True)

    def cell(self, op, rnd, side, rows, *, rc=0, timed_out=False, identity=None, ttgir=None):
        d = self.root / op / f"r{rnd:02d}" / side
        d.mkdir(parents=True)
        mode = "record" if (rnd, side) == (1, "A") else "replay"
        ident = {**IDENTITY, "autotune_mode": mode, **(identity or {})}
        if mode == "replay":
            ident["replay_source"] = f"{op}/r01/A"
        (d / "run_identity.json").write_text(json.dumps(ident))
        (d / "results.json").write_text(json.dumps({"schema": 1, "op": op, "rows": [
            {"op": op, "dtype": "float16", "size_detail": size, "torch_latency_ms": 1.0,
             "gems_latency_ms": ms, "speedup": 1.0, "status": "SUCCESS",
             "timer": "direct" if fb else "graph", "fallback": fb, "error": None,
             "replay_spread_pct": None if fb else WITHIN_CELL.get(side, 0.05)}
            for size, ms, fb in rows], "markers": {}}))
        if ttgir is not None:
            k = d / "ttgir" / "64" / "kernel"
            k.mkdir(parents=True)
            (k / "default.ttgir").write_text(ttgir)
        start = T0 + 100 * len(self.status)
        row = dict.fromkeys(COLUMNS, "0")
        row.update(round=str(rnd), op=op, side=side, switch_value="0" if side == "A" else "1",
                   rc=str(rc), timed_out="1" if timed_out else "0", start=f"{start:.3f}",
                   end=f"{start + 50:.3f}", cell=f"{op}/r{rnd:02d}/{side}", flags="",
                   finished="x", success_rows=str(len(rows)))
        self.status.append(row)
        return d

    def op(self, op, a_ms, b_ms, *, rounds=ROUNDS, extra=None, fail=None, control=False):
        """A/B rows for ``op``: per shape base latencies on each side, with jitter."""
        if control:
            self.meta["controls"].append(op)
        self.meta["ops"].append(op)
        for r in range(1, rounds + 1):
            j = JITTER[(r - 1) % len(JITTER)]
            for side in ("A", "B"):
                base = a_ms if side == "A" else b_ms
                rows = [(size, ms * (1 + (j if side == "A" else -j / 2)), False)
                        for size, ms in base.items()]
                rows += (extra or {}).get((r, side), [])
                bad = fail if fail and fail[:2] == (r, side) else None
                self.cell(op, r, side, rows, rc=bad[2] if bad else 0,
                          timed_out=bool(bad and bad[2] == 124),
                          identity=bad[3] if bad and len(bad) > 3 else None)
                if bad:
                    return

    def write(self):
        (self.root / "campaign.json").write_text(json.dumps(self.meta))
        lines = ["\t".join(COLUMNS)] + ["\t".join(r[c] for c in COLUMNS) for r in self.status]
        (self.root / "status.tsv").write_text("\n".join(lines) + "\n")
        return self.root


def fallback_rows():
    """Per round: a shape that always falls back on both sides, and one that does in r03/B only."""
    extra = {}
    for r in range(1, ROUNDS + 1):
        extra[(r, "A")] = [("[fb]", 1.0 + 0.001 * (r % 2), True), ("[mixed]", 1.0, False)]
        extra[(r, "B")] = [("[fb]", 1.0 + 0.001 * ((r + 1) % 2), True),
                           ("[mixed]", 1.0, r == 3)]
    return extra


@pytest.fixture
def campaign(tmp_path):
    c = Campaign(tmp_path / "ab_DISABLE_MMA_V3_20261202-101500")
    c.op("mm", {"[4096, 4096]": 1.10, "[1024, 1024]": 0.55}, {"[4096, 4096]": 1.0,
         "[1024, 1024]": 0.5}, extra=fallback_rows())
    c.op("bmm", {"[8, 512, 512]": 1.0}, {"[8, 512, 512]": 1.1})
    # A crashed cell with a half-written identity must not make the campaign refuse.
    c.op("softmax", {"[64]": 1.0}, {"[64]": 1.0}, fail=(2, "B", 1, {"timer": "direct"}))
    c.op("sort", {"[64]": 1.0}, {"[64]": 1.0}, fail=(1, "B", 124))
    c.op("relu", {"[64]": 1.0}, {"[64]": 1.0}, control=True)
    c.meta["ops"].append("add")  # stopped after round 1: identical TTGIR
    for side in ("A", "B"):
        c.cell("add", 1, side, [("[64]", 1.0, False)], ttgir="same IR\n")
    return c


def test_rounds_model(campaign):
    model = build(campaign.write())
    assert model["kind"] == "rounds" and model["caliber_problems"] == []
    ops = {o["op"]: o for o in model["summary"]["operators"]}
    assert ops["mm"]["verdict"] == "FASTER" and ops["bmm"]["verdict"] == "SLOWER"
    # the shape whose r03 fell back on one side is judged on its other rounds
    assert ops["mm"]["rounds"] == ROUNDS and ops["mm"]["counted_shapes"] == 3
    lo, hi = ops["mm"]["operator"]["range_of_round_medians"]
    assert 9.0 < lo <= hi < 11.0
    assert ops["mm"]["median_side_noise_pct"] > 0
    # Device seconds per decided shape verdict: what a budget or less noise must lower.
    dt = model["summary"]["device_time"]
    counted = [r for r in model["rows"] if r["counted"]]
    decided = [r for r in counted if r["verdict"] in ("FASTER", "SLOWER", "NO_CHANGE")]
    assert decided
    assert (dt["decided_shapes"], dt["counted_shapes"]) == (len(decided), len(counted))
    assert dt["s_per_decided_shape"] == pytest.approx(dt["total_s"] / len(decided), abs=0.06)
    assert f"{len(decided)} of {len(counted)} shape verdict(s) decided" in dt["text"]
    from zl_report import render

    assert "device time per decided shape" in render(model, "html")  # an overview card
    # Within a cell: the replays' spread, per side, beside the spread across processes.
    assert ops["mm"]["median_within_cell_pct"] == pytest.approx(0.05)
    mm_rows = {r["shape"]: r for r in model["rows"] if r["op"] == "mm"}
    assert (mm_rows["float16 [4096, 4096]"]["a_within_pct"],
            mm_rows["float16 [4096, 4096]"]["b_within_pct"]) == (0.04, 0.06)
    assert ops["mm"]["sign_changed_shapes"] == 0
    no_report = {x["op"]: x["reason"] for x in model["summary"]["no_report"]}
    assert set(no_report) == {"softmax", "sort"}
    assert "r02/B" in no_report["softmax"] and "timed out" in no_report["sort"]
    assert "softmax" not in ops and "sort" not in ops
    skipped = {x["op"]: x["reason"] for x in model["summary"]["skipped"]}
    assert "SWITCH_NO_IR_DIFF" in skipped["add"]


def test_fallback_shapes_are_never_pooled(campaign):
    model = build(campaign.write())
    rows = {r["size_detail"]: r for r in model["rows"] if r["op"] == "mm"}
    assert rows["[4096, 4096]"]["segment"] == "main" and rows["[4096, 4096]"]["verdict"] == "FASTER"
    assert rows["[4096, 4096]"]["stats"]["median_delta_pct"] == pytest.approx(10.0, abs=0.5)
    assert rows["[fb]"]["segment"] == "fallback" and rows["[fb]"]["counted"] is False
    assert rows["[mixed]"]["segment"] == "incomplete" and rows["[mixed]"]["counted"] is True
    assert "r03" in rows["[mixed]"]["reason"] and "side B fell back" in rows["[mixed]"]["reason"]
    # judged on the rounds whose pair is comparable; the left-out round is named
    assert rows["[mixed]"]["stats"]["n"] == ROUNDS - 1 and "round 3: no comparable row" in rows["[mixed]"]["stats"]["notes"]
    assert rows["[fb]"]["stats"]["n"] == ROUNDS  # judged apart, never pooled
    mm = next(o for o in model["summary"]["operators"] if o["op"] == "mm")
    assert mm["operator"]["n_shapes"] == 3  # the fallback shape does not decide the operator
    assert mm["fallback_shapes"] == 1 and mm["incomplete_shapes"] == 1


def test_controls_false_positive_rate(campaign):
    model = build(campaign.write())
    controls = model["summary"]["controls"]
    assert controls["text"] == "false-positive rate on this campaign's controls: 0/1"
    relu = next(o for o in model["summary"]["operators"] if o["op"] == "relu")
    assert relu["control"] is True and relu["verdict"] == "NO_CHANGE"


def test_aa_campaign_makes_every_op_a_control(tmp_path):
    c = Campaign(tmp_path / "aa", aa=True)
    c.op("mm", {"[1]": 1.10}, {"[1]": 1.0})  # a "difference" in an A/A run is a false positive
    c.op("relu", {"[1]": 1.0}, {"[1]": 1.0})
    model = build(c.write())
    assert model["summary"]["controls"]["called"] == 1
    assert model["summary"]["controls"]["total"] == 2
    assert "1/2" in model["summary"]["controls"]["text"]


def test_fail_on_exit_5_only_when_the_verdict_is_present(campaign, capsys):
    root = campaign.write()
    assert zl(["report", root, "--fail-on", "faster"]) == 5
    err = capsys.readouterr().err
    assert "mm: FASTER" in err
    assert zl(["report", root, "--fail-on", "slower"]) == 5
    assert zl(["report", root, "--fail-on", "inconclusive"]) == 0
    assert zl(["report", root]) == 0


def test_fail_on_ignores_controls(tmp_path):
    c = Campaign(tmp_path / "aa", aa=True)
    c.op("mm", {"[1]": 1.10}, {"[1]": 1.0})
    assert zl(["report", c.write(), "--fail-on", "any"]) == 0


def test_caliber_mismatch_in_one_round_refuses_naming_the_cell(campaign, capsys):
    ident = campaign.root / "mm" / "r03" / "B" / "run_identity.json"
    data = json.loads(ident.read_text())
    ident.write_text(json.dumps({**data, "timer": "direct"}))
    root = campaign.write()
    assert zl(["report", root]) == 4
    out, err = capsys.readouterr()
    assert out == ""
    line = next(ln for ln in err.splitlines() if "timer" in ln)
    assert "mm r03/B=direct" in line and "mm r01/A=graph" in line


def test_threshold_option_changes_the_verdict(campaign):
    root = campaign.write()
    model = build(root, threshold_pct=20.0)
    ops = {o["op"]: o["verdict"] for o in model["summary"]["operators"]}
    assert ops["mm"] == "NO_CHANGE" and model["summary"]["threshold_pct"] == 20.0


def _telemetry(root, slow_label):
    """Busy samples every 5 s over the campaign; the SM clock sags inside one cell."""
    rows = ["timestamp\tindex\tsm_clock_mhz\tmem_clock_mhz\ttemp_c\tpower_w\tutil_pct"]
    status = (root / "status.tsv").read_text().splitlines()
    header = status[0].split("\t")
    windows = [dict(zip(header, line.split("\t"), strict=True)) for line in status[1:]]
    slow = next(w for w in windows if f"{w['op']} r{int(w['round']):02d}/{w['side']}" == slow_label)
    end = max(float(w["end"]) for w in windows)
    t = T0
    while t <= end:
        low = float(slow["start"]) <= t <= float(slow["end"])
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
        rows.append(f"{stamp}\t0\t{900 if low else 1980}\t2619\t40\t300\t90")
        t += 5
    (root / "telemetry.tsv").write_text("\n".join(rows) + "\n")


def test_drift_flags_cells_and_names_verdicts_that_depend_on_them(campaign):
    root = campaign.write()
    _telemetry(root, "mm r02/A")
    drift = build(root)["summary"]["drift"]
    assert drift["telemetry"] is True
    flagged = {c["label"]: c["flags"] for c in drift["flagged_cells"]}
    assert list(flagged) == ["mm r02/A"] and flagged["mm r02/A"][0].startswith("sm_clock_low")
    assert drift["ops_with_flagged_cells"] == ["mm"]
    # +10% with jitter of a few tenths: the 5 unflagged rounds still call it
    assert drift["dependent_operators"] == []
    mm = next(o for o in build(root)["summary"]["operators"] if o["op"] == "mm")
    assert mm["drift_check"] == {"without_flagged": "FASTER", "depends": False, "why": ""}


def test_no_telemetry_no_drift_flags(campaign):
    drift = build(campaign.write())["summary"]["drift"]
    assert drift["telemetry"] is False and drift["flagged_cells"] == []


def test_text_report_states_every_outcome(campaign, capsys):
    assert zl(["report", campaign.write()]) == 0
    out = capsys.readouterr().out
    for needle in ("mm: FASTER", "bmm: SLOWER", "softmax: a cell failed", "sort:",
                   "SWITCH_NO_IR_DIFF", "false-positive rate on this campaign's controls: 0/1",
                   "positive = B faster", "0.05% within a cell", "0.04% / 0.06%"):
        assert needle in out, needle


def test_interrupted_round_gets_no_report(tmp_path):
    c = Campaign(tmp_path / "ab")
    c.op("mm", {"[1]": 1.1}, {"[1]": 1.0})
    c.cell("mm", ROUNDS + 1, "A", [("[1]", 1.1, False)])  # round 7 never got its B side
    model = build(c.write())
    (entry,) = model["summary"]["no_report"]
    assert entry["op"] == "mm" and "r07" in entry["reason"]


def test_rounds_html_and_markdown(campaign, tmp_path, capsys):
    root = campaign.write()
    out = tmp_path / "ab.html"
    assert zl(["report", root, "--format", "html", "--out", out]) == 0
    page = out.read_text()
    assert page.count("<svg") == 3  # one plot per reported operator: mm, bmm, relu
    assert "http://" not in page and "https://" not in page
    assert page.count("<script") == 1 and "<script>" in page  # ours, inline: sort and filter
    assert "SWITCH_NO_IR_DIFF" in page and "false-positive rate" in page
    assert zl(["report", root, "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| operator | verdict |" in md and "## mm: FASTER" in md


def test_four_fixed_rounds_can_decide_a_large_effect_and_three_cannot(tmp_path):
    fixed = Campaign(tmp_path / "ab_fixed", rounds=4)
    fixed.op("mm", {"[4096, 4096]": 1.3}, {"[4096, 4096]": 1.0}, rounds=4)
    model = build(fixed.write())
    [op] = model["summary"]["operators"]
    assert op["verdict"] == "FASTER"
    [row] = [r for r in model["rows"] if r["op"] == "mm"]
    assert row["stats"]["ci_method"].startswith("student-t") and row["stats"]["df"] == 2
    assert model["summary"]["plan"]["looks"] == [4]
    # three rounds (the smallest campaign zl ab accepted before): one order has a
    # single round, whose residual is zero, so no verdict
    three = Campaign(tmp_path / "ab_three", rounds=3)
    three.op("mm", {"[4096, 4096]": 1.3}, {"[4096, 4096]": 1.0}, rounds=3)
    model = build(three.write())
    [op] = model["summary"]["operators"]
    [row] = [r for r in model["rows"] if r["op"] == "mm"]
    assert op["verdict"] == "INCONCLUSIVE"
    assert any("a verdict needs at least 4" in n for n in row["stats"]["notes"])


def test_report_states_the_fdr_level_and_a_threshold_other_than_the_loops(tmp_path, capsys):
    c = Campaign(tmp_path / "ab_auto")
    c.op("mm", {"[4096, 4096]": 1.10}, {"[4096, 4096]": 1.0})
    c.meta.update(rounds="auto", max_rounds=6, threshold_pct=1.0)
    root = c.write()
    model = build(root, threshold_pct=2.0)
    fdr = model["summary"]["fdr"]
    assert fdr["level"] == 0.05 and fdr["tested"] == 1 and fdr["selected"] == 1
    assert model["summary"]["plan"]["looks"] == [4, 6]
    assert any("stopped on 1%" in n and "--threshold 2%" in n for n in model["notes"])
    assert not any("stopped on" in n for n in build(root)["notes"])
    assert zl(["report", root]) == 0
    assert "false-discovery control at 5%" in capsys.readouterr().out
