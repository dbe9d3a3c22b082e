"""When cells held their devices for timing, and how busy a campaign kept them: the
clock's device stretches, the record in every cell's phases, and the report's figure
(real CLI campaigns on the fake suite, whose cells time in their operator phase)."""

from __future__ import annotations

import json

import pytest
from zl_core.cli import main
from zl_core.interface import caliber, occupancy, phases
from zl_core.report import build_screen
from zl_report import render


class Ticks:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_the_clock_notes_device_stretches_without_the_compiles_inside_them():
    now = Ticks()
    clock = phases.PhaseClock(now=now, device=phases.DEVICE_PHASES, started_epoch=1000.0)
    now.t = 1.0
    with clock.phase(phases.TIMING):  # a timing call: 1.0 .. 4.0
        now.t = 2.0
        with clock.phase(phases.IR_DUMP):  # a nested phase off the device: 2.0 .. 2.5
            now.t = 2.5
        now.t = 3.5
        clock.credit(phases.COMPILATION, 0.5)  # a compile that ran 3.0 .. 3.5, reported after
        now.t = 4.0
    with clock.phase(phases.COLLECTION):
        now.t = 6.0
    with clock.phase(phases.AUTOTUNE):  # a benchmark of the sweep
        now.t = 7.0
    record = clock.busy_record()
    assert record["intervals"] == [[1001.0, 1002.0], [1002.5, 1003.0], [1003.5, 1004.0], [1006.0, 1007.0]]
    assert record["seconds"] == pytest.approx(3.0) and record["bridged_s"] == 0.0
    now.t = 7.2
    with clock.phase(phases.OPERATOR):  # an open stretch counts up to now in a record written mid-way
        now.t = 7.5
        assert clock.busy_record()["intervals"][-1] == [1007.2, 1007.5]
    with clock.phase(phases.REFERENCE):  # within the merge gap of the last: one interval
        now.t = 8.0
    assert clock.busy_record()["intervals"][-1] == [1007.2, 1008.0]


def test_the_record_stays_small_and_says_what_bridging_added():
    spans = occupancy.Intervals()
    for i in range(3 * occupancy.MAX_INTERVALS):
        spans.add(i * 1.0, i * 1.0 + 0.5 + (0.4 if i % 7 == 0 else 0.0))
    assert len(spans.spans) <= occupancy.MAX_INTERVALS
    covered = sum(e - s for s, e in spans.spans)
    assert covered == pytest.approx(spans.seconds + spans.bridged_s)
    assert spans.bridged_s > 0


def _screen(tmp_path, *args: str):
    root = tmp_path / "runs"
    assert main(["screen", "--ops", "gemm", "pointwise", "--suite", "fake", "--runs-root", str(root),
                 *args]) == 0
    (campaign,) = root.glob("screen_*")
    return campaign


def _busy(campaign, op, side):
    return caliber.read_identity(campaign / op / side)[phases.KEY][occupancy.KEY]


def test_a_screens_report_gives_the_wall_and_the_devices_busy_share(fake_host, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_TIME_S", "0.2")
    campaign = _screen(tmp_path)
    spans, windows = [], []
    for op in ("gemm", "pointwise"):
        for side in "AB":
            busy = _busy(campaign, op, side)
            (start, end), = busy["intervals"]
            assert busy["window"][0] <= start < end <= busy["window"][1]  # one clock base
            # The fake's timed call sleeps 0.2 s: the interval holds it and little else (a
            # loaded host oversleeps by tenths; the cell's imports and collection take more).
            assert 0.195 <= end - start <= 0.5 and busy["known_until"] is None
            spans.append((start, end))
            windows.append(busy["window"])
    occ = build_screen(campaign)["summary"]["time_spent"]["occupancy"]
    wall = max(w[1] for w in windows) - min(w[0] for w in windows)
    assert occ["wall_s"] == pytest.approx(wall, abs=0.002)
    assert occ["busy_s"] == pytest.approx(occupancy.measure(spans), abs=0.002)
    assert occ["unknown_cells"] == 0 and occ["busy_max_s"] == occ["busy_s"]
    assert occ["share"] == pytest.approx(occ["busy_s"] / occ["wall_s"], abs=1e-3)
    (lane,) = occ["lanes"]
    assert lane["lane"] == "0" and lane["cells"] == 4 and lane["share"] == occ["share"]
    model = build_screen(campaign)
    for fmt in ("text", "html", "md"):  # the pull-request form keeps it too
        # Words, not lines: the text wraps at the terminal's width (80 columns under pytest-xdist).
        out = " ".join(render(model, fmt).split())
        assert "Device occupancy" in out and "device busy timing" in out, fmt
    assert json.loads(render(model, "json"))["summary"]["time_spent"]["occupancy"] == occ


def _rewrite(campaign, op, side, **changes):
    ident = caliber.read_identity(campaign / op / side).to_json()  # a copy to edit
    busy = ident[phases.KEY][occupancy.KEY]
    for key, value in changes.items():
        if value is None and key == "drop":
            del ident[phases.KEY][occupancy.KEY]
        else:
            busy[key] = value
    caliber.write_identity(campaign / op / side, ident)


def test_cells_sharing_a_device_are_counted_once(fake_host, tmp_path):
    campaign = _screen(tmp_path, "--per-device", "2")
    t0 = _busy(campaign, "gemm", "A")["window"][0]
    # Two lanes of device 0 timing at once (as --per-device lets them): one second, not two.
    _rewrite(campaign, "gemm", "A", intervals=[[t0, t0 + 1.0]])
    _rewrite(campaign, "pointwise", "A", intervals=[[t0 + 0.5, t0 + 1.0], [t0, t0 + 0.25]])
    every = [(t0, t0 + 1.0), (t0 + 0.5, t0 + 1.0), (t0, t0 + 0.25)]
    every += [tuple(s) for op in ("gemm", "pointwise") for s in _busy(campaign, op, "B")["intervals"]]
    summed = sum(end - start for start, end in every)
    occ = build_screen(campaign)["summary"]["time_spent"]["occupancy"]
    # The B cells of the other lane may time inside that second too: the union of all,
    # which is at least 0.75 s below their sum (the two A cells' own overlap).
    assert occ["busy_s"] == pytest.approx(occupancy.measure(every), abs=0.002)
    assert occ["busy_s"] <= summed - 0.75 + 0.002


def test_a_cell_without_intervals_is_unknown_never_idle(fake_host, tmp_path):
    campaign = _screen(tmp_path)
    known = build_screen(campaign)["summary"]["time_spent"]["occupancy"]
    old = _busy(campaign, "pointwise", "B")
    _rewrite(campaign, "pointwise", "B", drop=None)  # as a cell of an older zl left it
    model = build_screen(campaign)
    occ = model["summary"]["time_spent"]["occupancy"]
    lost = occupancy.measure([tuple(s) for s in old["intervals"]])
    assert occ["unknown_cells"] == 1 and occ["lanes"][0]["unknown_cells"] == 1
    assert occ["busy_s"] == pytest.approx(known["busy_s"] - lost, abs=0.002)  # what is known
    window = old["window"][1] - old["window"][0]
    assert occ["busy_max_s"] >= occ["busy_s"] + window - lost - 0.002  # its whole window may have been
    assert occ["share_max"] > occ["share"]
    text = " ".join(render(model, "text").split())
    assert "1 of 4 cell(s) recorded no device intervals (unknown)" in text
    assert f"{occ['share'] * 100:.1f}% to {occ['share_max'] * 100:.1f}%" in text


@pytest.mark.slow
def test_lanes_of_one_device_unite_lanes_of_two_devices_add(lanes_main, tmp_path, monkeypatch):
    """A real campaign of two lanes per device on two devices: each device's busy time is
    the union of its cells' intervals (they time at once), never their sum."""
    monkeypatch.setenv("ZL_FAKE_SLEEP", "1.0")
    ops = ["abs", "add", "mul", "sub"]
    assert lanes_main(["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", *ops,
                       "--devices", "0,1", "--per-device", "2"]) == 0
    (campaign,) = (tmp_path / "runs").glob("screen_*")
    spans: dict[str, list] = {}
    own: dict[str, float] = {}
    for op in ops:
        for side in "AB":
            ident = caliber.read_identity(campaign / op / side)
            busy = ident[phases.KEY][occupancy.KEY]
            spans.setdefault(ident["device"], []).extend(tuple(s) for s in busy["intervals"])
            own[ident["device"]] = own.get(ident["device"], 0.0) + busy["seconds"]
    occ = build_screen(campaign)["summary"]["time_spent"]["occupancy"]
    lanes = {lane["lane"]: lane for lane in occ["lanes"]}
    assert set(lanes) == {"0", "1"} and occ["unknown_cells"] == 0
    for device, items in spans.items():
        assert lanes[device]["busy_s"] == pytest.approx(occupancy.measure(items), abs=0.002)
        assert lanes[device]["busy_s"] <= own[device] + 0.002
    assert any(lanes[d]["busy_s"] < own[d] - 0.5 for d in lanes)  # two lanes timed at once
    assert occ["busy_s"] == pytest.approx(sum(lane["busy_s"] for lane in lanes.values()), abs=0.002)
    assert occ["share"] == pytest.approx(occ["busy_s"] / (2 * occ["wall_s"]), abs=1e-3)


def test_a_killed_cell_is_unknown_a_failed_preflight_held_nothing(fake_host, tmp_path):
    from test_campaign_engine import engine_parts, settings
    from zl_core.cells.cell import run_cell
    from zl_core.interface.opspec import OpSpec

    backend, provider, _ = engine_parts(fake_host)
    req = settings(timeout=2.0).request(op=OpSpec.parse("hang"), backend=backend, device="0",
                                        out_dir=tmp_path / "cell", env={}, side="A",
                                        autotune_mode="record", replay_from=None)
    out = run_cell(fake_host, provider, req)
    busy = caliber.read_identity(out.cell_dir)[phases.KEY][occupancy.KEY]
    assert out.timed_out and busy["intervals"] is None and busy["window"][1] > busy["window"][0]
    read = occupancy.read(caliber.read_identity(out.cell_dir)[phases.KEY])
    assert not read.complete and read.unknown == (tuple(busy["window"]),)
    # The orchestrator's side: a process never started held the device for nothing.
    never = phases.assemble(wall_s=0.1, preflight_s=0.1, spawned=None, exited=None, cell=None,
                            window=(10.0, 10.1))[occupancy.KEY]
    assert never["intervals"] == [] and never["known_until"] is None
    # One killed after a record: known up to that record, unknown after it.
    record = phases.cell_record({}, started_epoch=11.0, final=False,
                                device_busy={"intervals": [[11.5, 12.0]], "seconds": 0.5, "bridged_s": 0.0})
    record["written"] = 12.5
    cut = phases.assemble(wall_s=3.0, preflight_s=0.1, spawned=10.5, exited=13.0, cell=record,
                          window=(10.0, 13.0))[occupancy.KEY]
    assert cut["intervals"] == [[11.5, 12.0]] and cut["known_until"] == 12.5
    read = occupancy.read({occupancy.KEY: cut})
    assert read.known == ((11.5, 12.0),) and read.unknown == ((12.5, 13.0),) and not read.complete


fake_flaggems = pytest.importorskip("fake_flaggems")


def test_a_flaggems_cell_records_when_its_timing_calls_held_the_device(tmp_path):
    pytest.importorskip("triton")
    fg = fake_flaggems.build(tmp_path / "FlagGems")
    proc = fake_flaggems.run_cell(fg, tmp_path / "cell", "benchmark/test_fake.py::test_fakeadd")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads((tmp_path / "cell" / "run_identity.json").read_text())[phases.CELL_KEY]
    busy = record[occupancy.KEY]
    s = record["seconds"]
    timing = s[phases.REFERENCE] + s[phases.OPERATOR] + (s[phases.AUTOTUNE] or 0.0)
    assert busy["intervals"] and 0 < busy["seconds"] <= timing + 0.01
    assert record["started"] <= busy["intervals"][0][0] and busy["intervals"][-1][1] <= record["written"]
