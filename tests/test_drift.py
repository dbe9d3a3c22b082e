"""zl_core.decisions.drift: joining cells to telemetry and flagging throttling / drift."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from zl_core.decisions.drift import (
    TELEMETRY_COLUMNS,
    CellFlag,
    CellWindow,
    TelemetrySample,
    flag_cells,
    load_group,
    parse_timestamp,
    read_telemetry_tsv,
)

T0 = datetime(2026, 12, 2, 11, 0, 0, tzinfo=timezone.utc).timestamp()


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def sample(t, index="0", clock=1980.0, temp=50.0, power=400.0, util=90.0, mem=2619.0):
    return TelemetrySample(timestamp=float(t), index=index, sm_clock_mhz=clock,
                           mem_clock_mhz=mem, temp_c=temp, power_w=power, util_pct=util)


def steady(start, end, index="0", **kw):
    return [sample(T0 + s, index=index, **kw) for s in range(start, end)]


def test_from_row_parses_iso_and_epoch_and_rejects_garbage():
    row = {"timestamp": "2026-12-02T11:38:46Z", "index": "3", "sm_clock_mhz": "1980",
           "mem_clock_mhz": "[N/A]", "temp_c": "61", "power_w": "412.5 W", "util_pct": ""}
    s = TelemetrySample.from_row(row)
    assert s.timestamp == datetime(2026, 12, 2, 11, 38, 46, tzinfo=timezone.utc).timestamp()
    assert s.index == "3" and s.sm_clock_mhz == 1980.0 and s.mem_clock_mhz is None
    assert s.power_w == 412.5 and s.util_pct is None and s.busy
    assert TelemetrySample.from_row({**row, "timestamp": "1796211526.25"}).timestamp == 1796211526.25
    assert TelemetrySample.from_row({**row, "timestamp": "yesterday"}) is None
    assert TelemetrySample.from_row({**row, "timestamp": "nan"}) is None
    assert TelemetrySample.from_row({**row, "index": ""}) is None
    assert TelemetrySample.from_row({"timestamp": "timestamp", "index": "index"}) is None
    # naive ISO and nvidia-smi's slash format are taken as UTC
    assert parse_timestamp("2026-12-02 11:38:46") == parse_timestamp("2026/12/02 11:38:46")
    assert parse_timestamp("2026-12-02T11:38:46+00:00") == s.timestamp


def test_read_telemetry_tsv_tolerates_truncation_and_missing_file(tmp_path):
    assert read_telemetry_tsv(tmp_path / "nope.tsv") == []
    lines = ["\t".join(TELEMETRY_COLUMNS)]
    for i in range(3):
        lines.append("\t".join([iso(T0 + i), "0", "1980", "2619", "50", "400", "90"]))
    lines.append("\t".join(TELEMETRY_COLUMNS))  # sampler restarted: header again
    lines.append("garbage line")
    path = tmp_path / "telemetry.tsv"
    # killed mid-write: "19" of "1980" must not become a 19 MHz sample
    path.write_text("\n".join(lines) + "\n" + "\t".join([iso(T0 + 3), "0", "19"]))
    got = read_telemetry_tsv(path)
    assert [s.timestamp for s in got] == [T0, T0 + 1, T0 + 2]
    assert all(s.sm_clock_mhz == 1980 for s in got)
    path.write_text("\n".join(lines[:2]) + "\n" + "\t".join([iso(T0 + 9), "0", "1500", "2619",
                                                              "50", "400", "90"]))
    assert [s.sm_clock_mhz for s in read_telemetry_tsv(path)] == [1980]
    path.write_text("")
    assert read_telemetry_tsv(path) == []


def test_flag_cells_throttle_and_no_samples():
    samples = (
        # device 0: clean cell, idle compile phase first (low clock and power, util 0)
        steady(0, 5, clock=345.0, power=70.0, util=0.0) + steady(5, 30)
        # device 1 at the same time: throttled to 1200 MHz for a few seconds
        + steady(0, 10, index="1") + steady(10, 14, index="1", clock=1200.0)
        + steady(14, 30, index="1")
        # device 0 again: a later round of the same operator and side
        + steady(30, 60)
    )
    windows = [
        CellWindow(label="mm/r01/B", device="0", start=T0 + 0.4, end=T0 + 30, group="mm/B"),
        CellWindow(label="mm/r02/B", device="cuda:1", start=T0 + 0.4, end=T0 + 30, group="mm/B"),
        CellWindow(label="mm/r03/B", device="0", start=T0 + 30.4, end=T0 + 60, group="mm/B"),
        CellWindow(label="mm/r04/B", device="2", start=T0, end=T0 + 30, group="mm/B"),
        CellWindow(label="any device", device=None, start=T0 + 10, end=T0 + 12, group="mm/B"),
    ]
    got = flag_cells(windows, samples)
    assert [f.label for f in got] == [w.label for w in windows]
    by = {f.label: f.flags for f in got}
    assert by["mm/r01/B"] == ()  # the idle compile phase is not throttling
    assert by["mm/r02/B"] == ("sm_clock_low(1200<0.75*1980 op)",)
    assert by["mm/r03/B"] == ()
    assert by["mm/r04/B"] == ("no_samples",)
    assert by["any device"] == ("sm_clock_low(1200<0.75*1980 op)",)
    relaxed = flag_cells(windows, samples, clock_fraction=0.5)
    assert all(f.flags in ((), ("no_samples",)) for f in relaxed)


def test_one_low_sample_is_not_a_throttle():
    # Seen on the H200: one busy sample at 1470 MHz in a GEMM cell otherwise at 1980
    # (the clock ramping), and an addmm cell whose only busy sample, 1440 MHz at 95%
    # utilisation, caught its power-limited shape while the other addmm cells' busy
    # samples were light launches at 1965-1980.
    samples = [*steady(0, 5), sample(T0 + 5, clock=1470.0), *steady(6, 12)]
    samples += [*steady(20, 26, clock=345.0, util=0.0), sample(T0 + 26, clock=1440.0, util=95.0)]
    samples += steady(27, 38, clock=345.0, util=0.0) + steady(40, 60, clock=1965.0, util=8.0)
    windows = [CellWindow(label="ramp", device="0", start=T0, end=T0 + 11, group="g"),
               CellWindow(label="one", device="0", start=T0 + 20, end=T0 + 37, group="g"),
               CellWindow(label="light", device="0", start=T0 + 40, end=T0 + 59, group="g")]
    # 1440 < 0.75 * 1972.5 (the median of the others' 1980 and 1965): one sample is not enough
    assert [f.flags for f in flag_cells(windows, samples)] == [(), (), ()]


def test_temperature_and_power_are_judged_against_the_cells_of_the_same_load():
    # Three rounds of one operator and side; round 3 runs 15 C hotter and draws more.
    samples = []
    windows = []
    for r, (temp, power) in enumerate([(50.0, 300.0), (52.0, 310.0), (65.0, 500.0)]):
        t = 20 * r
        # idle compile phase, then load: the window median follows the card's baseline
        samples += steady(t, t + 4, temp=temp, power=power, util=0.0)
        samples += steady(t + 4, t + 10, temp=temp + 5, power=power + 300)
        windows.append(CellWindow(label=f"mm/r0{r + 1}/B", device="0", start=T0 + t,
                                  end=T0 + t + 9, group="mm/B"))
    # A different load (another operator) never judges these cells.
    samples += steady(70, 80, temp=80.0, power=650.0)
    windows.append(CellWindow(label="big/r01/B", device="0", start=T0 + 70, end=T0 + 79,
                              group="big/B"))
    by = {f.label: f.flags for f in flag_cells(windows, samples)}
    assert by["mm/r01/B"] == () and by["mm/r02/B"] == ()
    assert by["mm/r03/B"] == ("temp_drift(+13C>10C)", "power_drift(+31%>25%)")
    assert by["big/r01/B"] == ()  # a group of one has nothing to be compared with
    relaxed = flag_cells(windows, samples, max_temp_drift_c=20, max_power_drift_pct=50)
    assert all(f.flags == () for f in relaxed)


def test_load_group_keeps_the_recording_cell_apart():
    assert load_group("mm", "1", "A") == "mm/A/record"
    assert load_group("mm", 1, "B") == "mm/B"
    assert load_group("mm", "r03", "A") == "mm/A"
    assert load_group("mm", "x", "A") == "mm/A"


def test_flag_cells_notes_only_idle_samples_and_never_raises_on_empty():
    idle = steady(0, 10, clock=345.0, util=0.0)
    [flag] = flag_cells([CellWindow(label="c", device="0", start=T0, end=T0 + 9)], idle)
    assert flag.flags == ("no_busy_samples",)
    [flag] = flag_cells([CellWindow(label="c", device=None, start=T0, end=T0 + 9)], [])
    assert flag.flags == ("no_samples",) and flag.text == "no_samples"


def test_window_edges_follow_whole_second_stamps():
    # A sample stamped 11:00:05 was taken in [05, 06): it belongs to a cell that
    # started at 05.7, but one stamped 11:00:04 does not.
    samples = [sample(T0 + 4, clock=1000.0), sample(T0 + 5, clock=1100.0),
               sample(T0 + 6, clock=1150.0), *steady(7, 20)]
    [f, _] = flag_cells([CellWindow(label="c", device="0", start=T0 + 5.7, end=T0 + 6.5, group="g"),
                         CellWindow(label="d", device="0", start=T0 + 8, end=T0 + 19, group="g")],
                        samples)
    # samples 5 and 6 are in (their second lowest is shown); 4 is not, or 1100 would show
    assert f.flags == ("sm_clock_low(1150<0.75*1980 op)",)
    assert "," not in CellFlag(label="x", flags=f.flags).flags[0]
    assert CellFlag(label="x", flags=("a", "b")).text == "a,b"


def test_reading_and_flagging_end_to_end(tmp_path):
    path = tmp_path / "telemetry.tsv"
    rows = ["\t".join(TELEMETRY_COLUMNS)]
    for i in range(20):
        clock = "990" if 8 <= i < 10 else "1980"
        rows.append("\t".join([iso(T0 + i), "0", clock, "2619", "55", "400", "80"]))
    path.write_text("\n".join(rows) + "\n")
    samples = read_telemetry_tsv(path)
    flags = flag_cells([CellWindow(label="a", device="0", start=T0, end=T0 + 5, group="mm/B"),
                        CellWindow(label="b", device="0", start=T0 + 6, end=T0 + 12, group="mm/B")],
                       samples)
    assert [f.flags for f in flags] == [(), ("sm_clock_low(990<0.75*1980 op)",)]


@pytest.mark.parametrize("device", ["0", "cuda:0", "00", "0,3"])
def test_device_spellings_match_the_sampler_index(device):
    samples = steady(0, 5, clock=1000.0) + steady(5, 30)
    [f, _] = flag_cells([CellWindow(label="c", device=device, start=T0, end=T0 + 3, group="g"),
                         CellWindow(label="d", device="0", start=T0 + 10, end=T0 + 29, group="g")],
                        samples)
    assert f.flags == ("sm_clock_low(1000<0.75*1980 op)",)


# Busy samples (clock MHz, util %) as an H200 showed them in an A/A campaign
# (docs/validation/2026-12-03-h200.md): pointwise operators at 1980 MHz throughout; a
# GEMM's first launches light at 1980, its large shapes power-limited near 1455.
POINTWISE = [(1980.0, 98.0), (1980.0, 3.0), (1980.0, 100.0), (1980.0, 48.0)]
GEMM = [(1980.0, 5.0), (1470.0, 99.0), (1455.0, 100.0), (1440.0, 96.0), (1425.0, 100.0)]
THROTTLED = [(900.0, 3.0), (900.0, 99.0), (915.0, 100.0), (885.0, 100.0), (900.0, 98.0)]


def _cell(t, busy):
    """A cell from ``t``: 4 s importing and compiling with the device idle, then ``busy``."""
    out = steady(t, t + 4, clock=345.0, temp=40.0, power=80.0, util=0.0)
    for k, (clock, util) in enumerate(busy):
        heavy = util > 50
        out.append(sample(T0 + t + 4 + k, clock=clock, util=util,
                          temp=58.0 if heavy else 45.0, power=650.0 if heavy else 130.0))
    return out


def _campaign(rounds, ops, busy_of=lambda op, rnd, side: None):
    """Windows (grouped as a campaign groups them) and samples of ``rounds`` alternating
    rounds over ``ops`` ({op: its busy samples}); ``busy_of`` may replace a cell's."""
    windows, samples, t = [], [], 0
    for op, busy in ops.items():
        for rnd in rounds:
            for side in ("AB" if rnd % 2 else "BA"):
                cell = busy_of(op, rnd, side) or busy
                samples += _cell(t, cell)
                windows.append(CellWindow(label=f"{op} {rnd} {side}", device="0", start=T0 + t,
                                          end=T0 + t + 4 + len(cell) + 0.5,
                                          group=load_group(op, rnd, side)))
                t += 4 + len(cell) + 2
    return windows, samples


def _flagged(windows, samples):
    return {f.label: f.flags for f in flag_cells(windows, samples) if f.flags}


def test_a_gemm_at_its_power_limited_clock_is_not_drift():
    windows, samples = _campaign([1, 2, 3], {"relu": POINTWISE, "bmm": GEMM, "add": POINTWISE})
    assert _flagged(windows, samples) == {}
    # The campaign's busy clock is the pointwise one, and every GEMM cell's second lowest
    # busy clock lies below 0.75 of it: judged against the campaign, all six were flagged.
    busy = [s.sm_clock_mhz for s in samples if s.busy]
    assert sorted(busy)[len(busy) // 2] == 1980.0 and sorted(c for c, _ in GEMM)[1] < 0.75 * 1980


def test_a_round_whose_clock_collapsed_is_flagged_against_its_own_operator():
    def collapse(op, rnd, side):
        # bmm/B has three cells; bmm/A two (round 1's side A records, a group apart)
        return THROTTLED if (op, rnd, side) in {("bmm", 2, "B"), ("bmm", 3, "A")} else None

    windows, samples = _campaign([1, 2, 3], {"relu": POINTWISE, "bmm": GEMM}, collapse)
    flagged = _flagged(windows, samples)
    assert flagged == {"bmm 2 B": ("sm_clock_low(900<0.75*1455 op)",),
                       "bmm 3 A": ("sm_clock_low(900<0.75*1455 op)",)}
    assert not any(ch in flagged["bmm 2 B"][0] for ch in ",\t")
    # Against the median of its group with itself in it (1177.5 for the pair) it was not.
    assert 900 > 0.75 * (1455 + 900) / 2
    assert _flagged(windows, samples) == _flagged(*_campaign([1, 2, 3], {"bmm": GEMM}, collapse))


def test_a_cell_alone_in_its_group_is_not_judged_by_the_clock():
    # A screen: one cell per operator and side (round 0). The GEMM's normal clock is no
    # drift, and a lone cell has no cells of its own load to be compared with.
    windows, samples = _campaign([0], {"relu": POINTWISE, "bmm": GEMM})
    assert len({w.group for w in windows}) == len(windows) == 4
    assert _flagged(windows, samples) == {}
    windows, samples = _campaign([0], {"relu": POINTWISE, "bmm": GEMM},
                                 lambda op, rnd, side: THROTTLED if op == "bmm" else None)
    assert _flagged(windows, samples) == {}
    # One round: round 1's recording cell and side B are each alone in their group.
    windows, samples = _campaign([1], {"relu": POINTWISE, "bmm": GEMM})
    assert {w.group for w in windows} == {"relu/A/record", "relu/B", "bmm/A/record", "bmm/B"}
    assert _flagged(windows, samples) == {}
