"""Cells, screens and A/B rounds end to end with real processes (tests/fake_cell.py)."""

from __future__ import annotations

import json
import time

import attrs
import pytest
from own_processes import holding
from zl_core import hookimpl
from zl_core.app.seal import finish_campaign
from zl_core.campaigns.ab_campaign import run_ab
from zl_core.campaigns.ab_task import RoundsPlan, side_order
from zl_core.campaigns.screen_campaign import latest_screen, run_screen
from zl_core.campaigns.settings import CellSettings
from zl_core.campaigns.spec import CampaignSpec
from zl_core.cells.cell import run_cell
from zl_core.decisions.status import read_status
from zl_core.foundation.errors import PreflightError
from zl_core.foundation.switches import resolve_sides
from zl_core.interface import caliber
from zl_core.interface.opspec import OpSpec
from zl_core.store.record import read_campaign
from zl_core.store.screen_table import read_screen


def settings(timeout=60.0):
    import sys

    return CellSettings(python=sys.executable, source=None, shape_file=None, shapes="file",
                        level="core", timer="auto", direct_repeat=1, isolate_tuner_cache=True,
                        timeout_s=timeout, compile_only=False, target=None)


# Not named setup: pytest before 8 calls a module-level setup(module) as nose-style setup.
def engine_parts(fake_host):
    backend = fake_host.get_backend("fg")
    provider = fake_host.get_provider("fake")
    sides = resolve_sides(backend, None, None, None)
    return backend, provider, sides


def fake_spec(fake_host, ops, settings, runs_root, **fields) -> CampaignSpec:
    """A campaign of the fake suite on device 0: a screen, or an A/B one given ``plan=``."""
    backend, provider, sides = engine_parts(fake_host)
    return CampaignSpec(provider=provider, backend=backend, device="0", sides=sides, ops=ops,
                        settings=settings, runs_root=runs_root, **fields)


def test_cell_writes_identity_log_and_removes_its_triton_cache(fake_host, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")  # another vendor's key must not leak
    backend, provider, sides = engine_parts(fake_host)
    req = settings().request(op=OpSpec.parse("gemm"), backend=backend, device="0",
                             out_dir=tmp_path / "cell", env=sides.env("B"), side="B",
                             autotune_mode="record", replay_from=None)
    out = run_cell(fake_host, provider, req)
    assert out.ok and out.success_rows == 2
    ident = caliber.read_identity(out.cell_dir)
    assert ident["env"] == {"FAKE_SWITCH": "1"} and ident["autotune_mode"] == "record"
    assert ident["tuner_cache"] == "isolated" and ident["rc"] == 0
    log = (out.cell_dir / "run.log").read_text()
    assert "switch=1" in log and "triton_cache=" + str(out.cell_dir / ".triton_cache") in log
    assert not (out.cell_dir / ".triton_cache").exists()


def test_cell_identity_names_the_device_by_the_vendor_tool(fake_host, tmp_path):
    from zl_core.interface import caliber as cal

    class Smi:
        @hookimpl
        def zl_device_identity(self, backend, device):
            return {"device_name": f"Fake GPU {device}", "device_uuid": "FAKE-UUID-0"}

    fake_host.register(Smi(), name="smi")
    backend, provider, _ = engine_parts(fake_host)
    req = settings().request(op=OpSpec.parse("gemm"), backend=backend, device="0",
                             out_dir=tmp_path / "cell", env={}, side="A", autotune_mode="record",
                             replay_from=None)
    out = run_cell(fake_host, provider, req)
    ident = cal.read_identity(out.cell_dir)
    assert (ident["device_name"], ident["device_uuid"]) == ("Fake GPU 0", "FAKE-UUID-0")
    # what the cell process adds fills only what the identity lacks
    cal.fill_identity(out.cell_dir, {"device_name": "torch's name", "torch_version": "2.11"})
    ident = cal.read_identity(out.cell_dir)
    assert (ident["device_name"], ident["torch_version"]) == ("Fake GPU 0", "2.11")


def test_cell_env_applies_visibility_and_contract(fake_host, tmp_path, monkeypatch):
    from zl_core.cells.cell import cell_environment

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    backend, _, _ = engine_parts(fake_host)
    req = settings().request(op=OpSpec.parse("gemm:mmfile:float16"), backend=backend, device="2",
                             out_dir=tmp_path / "c", env={"X": "1"}, side="A",
                             autotune_mode="replay", replay_from=tmp_path / "src")
    env = cell_environment(fake_host, req)
    assert env["FAKE_VISIBLE_DEVICES"] == "2"
    assert env["ZL_OP"] == "gemm" and env["ZL_DTYPES"] == "float16"
    assert "ZL_OP_FILE" not in env and "ZL_DEVICE" not in env  # set once, read by nothing
    assert env["ZL_REPLAY_DIR"] == str((tmp_path / "src" / "autotune_records").resolve())
    assert env["X"] == "1" and env["ZL_AUTOTUNE_MODE"] == "replay"
    assert env["ZL_REPLAY_MS"] == "30"  # the default graph replay budget
    req = attrs.evolve(req, replay_ms=12.5)
    assert cell_environment(fake_host, req)["ZL_REPLAY_MS"] == "12.5"


def test_cell_env_has_one_writer_per_contract_variable(fake_host, tmp_path, monkeypatch):
    from zl_core.cells.cell import cell_environment
    from zl_core.interface import contract

    monkeypatch.setenv("ZL_SHAPE_FILE", "/stale/from/the/caller.yaml")
    monkeypatch.setenv("ZL_REPLAY_DIR", "/stale/records")
    monkeypatch.setenv("DROP_ME", "1")
    monkeypatch.delenv("GEMS_VENDOR", raising=False)
    backend, _, _ = engine_parts(fake_host)
    backend = attrs.evolve(backend, flaggems_vendor="fakevendor")  # the provider's business now
    req = settings().request(op=OpSpec.parse("gemm"), backend=backend, device="0",
                             out_dir=tmp_path / "c", env={"DROP_ME": "2"}, side="A",
                             autotune_mode="record", replay_from=None)
    env = cell_environment(fake_host, req, extra={contract.SHAPE_FILE: "", contract.PROVIDER: "p"},
                           unset=("DROP_ME",))
    assert env[contract.SHAPE_FILE] == "" and env[contract.PROVIDER] == "p"  # the provider's
    assert contract.REPLAY_DIR not in env and "DROP_ME" not in env
    assert env[contract.SEED] == contract.DEFAULT_SEED
    assert "GEMS_VENDOR" not in env and "FLAGGEMS_CACHE_DIR" not in env


def test_cell_refuses_to_reuse_a_run_directory(fake_host, tmp_path):
    from zl_core.foundation.errors import UsageError

    backend, provider, _ = engine_parts(fake_host)
    (tmp_path / "cell").mkdir()
    (tmp_path / "cell" / "run.log").write_text("old")
    req = settings().request(op=OpSpec.parse("gemm"), backend=backend, device="0",
                             out_dir=tmp_path / "cell", env={}, side="A", autotune_mode="record",
                             replay_from=None)
    with pytest.raises(UsageError, match="already holds a run"):
        run_cell(fake_host, provider, req)
    assert (tmp_path / "cell" / "run.log").read_text() == "old"


@pytest.mark.slow
def test_hanging_cell_is_killed_with_its_process_group(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    req = settings(timeout=2.0).request(op=OpSpec.parse("hang"), backend=backend, device="0",
                                        out_dir=tmp_path / "cell", env={}, side="A",
                                        autotune_mode="record", replay_from=None)
    t0 = time.time()
    out = run_cell(fake_host, provider, req)
    assert out.timed_out and out.rc == 124
    assert time.time() - t0 < 30
    assert "CELL_TIMEOUT" in (out.cell_dir / "run.log").read_text()
    # The grandchild sleeper must be gone too: no process still holds the group.
    time.sleep(0.5)
    assert holding(tmp_path) == []


def test_preflight_failure_is_recorded_and_raised(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    req = settings().request(op=OpSpec.parse("missing"), backend=backend, device="0",
                             out_dir=tmp_path / "cell", env={}, side="A", autotune_mode="record",
                             replay_from=None)
    with pytest.raises(PreflightError) as info:
        run_cell(fake_host, provider, req)
    assert info.value.exit_code == 3
    assert "PREFLIGHT_FAILED check=benchmark_file" in (tmp_path / "cell" / "run.log").read_text()


def test_screen_verdicts_and_tables(fake_host, tmp_path):
    ops = [OpSpec.parse(s) for s in ("gemm", "pointwise", "aten", "norows", "missing")]
    campaign, rows = run_screen(fake_host, fake_spec(fake_host, ops, settings(), tmp_path))
    verdicts = {r["op"]: r["verdict"] for r in rows}
    assert verdicts == {"gemm": "IR_CHANGED", "pointwise": "NO_IR_DIFF", "aten": "NO_TRITON",
                        "norows": "NO_ROWS", "missing": "NO_ROWS"}
    assert [r.to_dict() for r in read_screen(campaign)] == json.loads((campaign / "screen.json").read_text())["ops"]
    header = (campaign / "screen.tsv").read_text().splitlines()[0].split("\t")
    assert "timer" in header and "autotune_mode" in header and "verdict" in header
    gemm = next(r for r in rows if r["op"] == "gemm")
    assert gemm["convert_layouts_a"] == 1 and gemm["kernels_b"] == 1
    # B replayed A's record: its identity names the source cell.
    ident_b = caliber.read_identity(campaign / "gemm" / "B")
    assert ident_b["autotune_mode"] == "replay"
    assert ident_b["replay_source"] == str((campaign / "gemm" / "A").resolve())
    status = read_status(campaign)
    assert [(s.op, s.side) for s in status][:2] == [("gemm", "A"), ("gemm", "B")]
    assert any(s.op == "missing" and s.rc == "3" for s in status)
    assert latest_screen(tmp_path) is None  # its cells ended; its finish has not run
    finish_campaign(campaign)  # what zl screen does next (receipts, then complete)
    assert latest_screen(tmp_path) == campaign
    assert read_campaign(campaign).switch == "FAKE_SWITCH"


def test_side_order_is_counterbalanced_and_old_campaigns_alternate():
    assert [side_order("counterbalanced", r) for r in (1, 2, 3, 4, 5)] == [
        ("A", "B"), ("B", "A"), ("B", "A"), ("A", "B"), ("A", "B")]
    assert [side_order("alternating", r) for r in (1, 2, 3)] == [("A", "B"), ("B", "A"), ("A", "B")]


def test_ab_rounds_pin_to_round_one_and_stop_identical_ir(fake_host, tmp_path):
    pytest.importorskip("zl_core.interface.rows")
    plan = RoundsPlan(rounds=3, max_rounds=3, allow_no_ir_diff=False, threshold_pct=1.0)
    ops = [OpSpec.parse("gemm"), OpSpec.parse("pointwise"), OpSpec.parse("norows")]
    campaign, runs = run_ab(fake_host, fake_spec(fake_host, ops, settings(), tmp_path, plan=plan))
    state = {r.op.op: r.state for r in runs}
    assert state == {"gemm": "done", "pointwise": "SWITCH_NO_IR_DIFF", "norows": "failed"}
    status = [s for s in read_status(campaign) if s.op == "gemm"]
    assert [(s.round, s.side) for s in status] == [
        ("1", "A"), ("1", "B"), ("2", "B"), ("2", "A"), ("3", "B"), ("3", "A")]
    assert read_campaign(campaign).round_order == "counterbalanced"
    record = str((campaign / "gemm" / "r01" / "A").resolve())
    for r in (1, 2, 3):
        for side in "AB":
            ident = caliber.read_identity(campaign / "gemm" / f"r{r:02d}" / side)
            expected = "record" if (r, side) == (1, "A") else "replay"
            assert ident["autotune_mode"] == expected
            if expected == "replay":
                assert ident["replay_source"] == record
    assert not list(campaign.glob("pointwise/r02"))
    flagged = [s for s in read_status(campaign) if s.op == "pointwise"]
    assert flagged and all(s.flags == "SWITCH_NO_IR_DIFF" for s in flagged)
    # Each side's cells share one Triton cache across the rounds: round 1 compiles, later
    # rounds find what their own side compiled and never the other side's; the caches
    # are gone once the operators end.
    for r in (1, 2, 3):
        for side, switch in (("A", "0"), ("B", "1")):
            cell = campaign / "gemm" / f"r{r:02d}" / side
            log = (cell / "run.log").read_text()
            own = (campaign / ".compile_cache" / "gemm" / side).resolve()
            assert f"triton_cache={own} " in log
            assert f"cache_seen={'-' if r == 1 else f'kernel-switch{switch}'}\n" in log, (r, side, log)
            assert caliber.read_identity(cell)["compile_cache"] == "side"
    assert not (campaign / ".compile_cache").exists()


# FlagGems writes a generated kernel (relu's) into each cell's own cache folder, so a later
# round's dump may name another source path for the same code: the note says which it is.
@pytest.mark.parametrize(("kind", "how"), [
    ("code", "1 of 1 variant(s) changed in 1 kernel(s): gemm_kernel; its rounds did not all time the "
             "same code"),
    ("locations", "only names and source locations changed (canonical TTGIR identical), the same code "
                  "timed"),
])
def test_a_round_whose_ttgir_differs_from_round_ones_is_named_with_how(fake_host, tmp_path, monkeypatch,
                                                                       caplog, kind, how):
    monkeypatch.setenv("FAKE_IR_DRIFT_ROUND", "r02")
    monkeypatch.setenv("FAKE_IR_DRIFT_KIND", kind)
    plan = RoundsPlan(rounds=3, max_rounds=3, allow_no_ir_diff=False, threshold_pct=1.0)
    with caplog.at_level("INFO"):
        run_ab(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm")], settings(), tmp_path, plan=plan))
    notes = [line for line in caplog.text.splitlines() if "differs from round 1's" in line]
    assert len(notes) == 2, caplog.text
    for side in "AB":
        assert any(f"gemm: note: round 2 side {side}'s TTGIR differs from round 1's: {how}" in n
                   for n in notes), notes


def test_adaptive_rounds_stop_once_every_shape_is_decided(fake_host, tmp_path):
    from zl_core import stats

    plan = RoundsPlan(rounds=None, max_rounds=10, allow_no_ir_diff=False, threshold_pct=1.0)
    _, runs = run_ab(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm")], settings(), tmp_path, plan=plan))
    # The fake's 5% slowdown is the same in every round; the interval keeps the width
    # the latencies' printed resolution allows, so a planned look soon decides it and
    # the budget of 10 is not spent.
    assert runs[0].state == "done"
    assert runs[0].rounds_done in stats.Plan.adaptive(10).looks and runs[0].rounds_done < 10
    assert "decided" in runs[0].reason


def test_backend_is_chosen_by_the_vendor_tool_that_sees_devices(fake_host):
    from zl_core import Backend, hookimpl
    from zl_core.app.resolve import resolve_backend

    class SharedTorchVendor:  # like ROCm on an NVIDIA box: no tool, torch.cuda shared
        @hookimpl
        def zl_backends(self):
            return [Backend(name="othergpu", torch_namespace="cuda")]

    fake_host.register(SharedTorchVendor(), name="other")
    assert resolve_backend(fake_host, None).name == "fakegpu"


def test_no_device_anywhere_points_to_the_ir_only_screen(fake_host, monkeypatch):
    from zl_core import Backend, hookimpl
    from zl_core.cli import main

    class NoHardware:
        @hookimpl
        def zl_backends(self):
            return [Backend(name="othergpu")]

    fake_host.register(NoHardware(), name="other")
    monkeypatch.setattr(type(fake_host), "probe_devices", lambda self, b: [])
    monkeypatch.setattr(type(fake_host), "enumerate_devices", lambda self, b, explicit=None: [])
    assert main(["screen", "--ops", "gemm", "--suite", "fake"]) == 2


def test_throttled_cells_are_flagged_in_status(tmp_path):
    from zl_core.cells.cell import CellOutcome
    from zl_core.decisions.status import append_status, rewrite_flags, telemetry_flags

    t0 = 1_800_000_000.0
    for i, (round_no, side) in enumerate([(1, "A"), (1, "B"), (2, "B"), (2, "A")]):
        out = CellOutcome(cell_dir=tmp_path / "mm" / f"r0{round_no}" / side, rc=0,
                          timed_out=False, elapsed_s=10, start=t0 + 20 * i,
                          end=t0 + 20 * i + 10, markers={}, success_rows=1, failed_rows=0)
        out.cell_dir.mkdir(parents=True)
        append_status(tmp_path, round_no=round_no, op="mm", side=side, switch_value=side,
                      outcome=out)
    lines = ["timestamp\tindex\tsm_clock_mhz\tmem_clock_mhz\ttemp_c\tpower_w\tutil_pct"]
    for s in range(80):  # round 1's side B throttles to 900 MHz, the other cells run at 1980
        clock = 900 if 21 <= s <= 29 else 1980
        lines.append(f"{t0 + s:.0f}\t0\t{clock}\t3201\t50\t400\t90")
    (tmp_path / "telemetry.tsv").write_text("\n".join(lines) + "\n")
    flags = telemetry_flags(tmp_path, "0")
    assert list(flags) == [("mm", "1", "B")]
    assert flags[("mm", "1", "B")] == ["sm_clock_low(900<0.75*1980 op)"]
    assert rewrite_flags(tmp_path, flags) == 1
    rows = {(r.round, r.side): r.flags for r in read_status(tmp_path)}
    assert rows == {("1", "A"): "", ("1", "B"): "sm_clock_low(900<0.75*1980 op)",
                    ("2", "B"): "", ("2", "A"): ""}


def test_rounds_report_states_the_device_time_used(fake_host, tmp_path):
    from zl_core.report import build_rounds

    plan = RoundsPlan(rounds=None, max_rounds=8, allow_no_ir_diff=False, threshold_pct=1.0)
    campaign, runs = run_ab(fake_host, fake_spec(fake_host, [OpSpec.parse("gemm")], settings(), tmp_path,
                                                 plan=plan))
    report = build_rounds(campaign)
    used = report["summary"]["device_time"]
    cells = [s for s in read_status(campaign) if s.op == "gemm"]
    assert used["per_op"]["gemm"]["rounds"] == runs[0].rounds_done
    assert used["total_s"] == pytest.approx(sum(float(s.elapsed_s) for s in cells), abs=0.2)
    op = report["summary"]["operators"][0]
    assert op["verdict"] == "SLOWER"  # the fake's switch makes B 5% slower on every shape


def test_two_step_flow_through_the_cli(fake_host, tmp_path, capsys):
    from zl_core.cli import main

    root = str(tmp_path / "runs")
    assert main(["screen", "--ops", "gemm", "pointwise", "--suite", "fake", "--runs-root", root]) == 0
    capsys.readouterr()
    # Step 2 takes the screen's IR_CHANGED ops and its switch without being told.
    assert main(["ab", "--rounds", "4", "--suite", "fake", "--runs-root", root,
                 "--telemetry-interval", "0"]) == 0
    out, err = capsys.readouterr()
    assert "using screen" in err and "gemm" in err and "switch FAKE_SWITCH A=0 B=1 (from the screen)" in err
    campaign = next((tmp_path / "runs").glob("ab_*"))
    assert {p.name for p in campaign.iterdir() if p.is_dir()} == {"gemm"}
    model = json.loads((campaign / "report.json").read_text())
    assert model["kind"] == "rounds"
    # Each operator's end says its verdict with the estimate and interval it rests on.
    est = model["summary"]["operators"][0]["estimate"]
    assert (f"  gemm: done, 4 round(s): SLOWER {est['estimate_pct']:+.2f}% "
            f"[{est['ci_low_pct']:+.2f}%, {est['ci_high_pct']:+.2f}%]") in out.splitlines()
    # The fake's switch makes B 5% slower: four rounds decide it, and --fail-on gates on it.
    assert main(["report", str(campaign), "--fail-on", "slower"]) == 5
    assert main(["report", str(campaign), "--fail-on", "inconclusive"]) == 0


@pytest.mark.parametrize("argv, needle", [
    (["run", "--op", "softmax", "--dtypes", "f;16"], "malformed dtype"),
    (["run", "--op", "../etc/passwd"], "malformed op name"),
    (["screen", "--ops", "mm:mm:float16:extra"], "malformed op spec"),
    (["ab", "--ops", "$(reboot)"], "malformed op name"),
])
def test_odd_names_are_refused_on_one_line_before_anything_runs(argv, needle, fake_host, tmp_path,
                                                                 capsys, monkeypatch):
    from zl_core.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_aa_sides_set_nothing_unless_a_switch_is_named(fake_host):
    from zl_core.foundation.errors import UsageError

    backend, _, _ = engine_parts(fake_host)
    plain = resolve_sides(backend, None, None, None, aa=True)
    assert plain.switch == "none" and plain.a_env == {} and plain.b_env == {}
    named = resolve_sides(backend, "TRITON_F32_DEFAULT", "ieee", "tf32", aa=True)
    assert named.a_env == named.b_env == {"TRITON_F32_DEFAULT": "ieee"}
    assert named.b_value == "ieee"
    with pytest.raises(UsageError, match="--aa"):
        resolve_sides(backend, "X", "1", "1")
