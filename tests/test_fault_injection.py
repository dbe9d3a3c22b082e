"""Fault injection: a lanes screen of eight operators on the fake 4-GPU host, hit by one
fault at a seeded random moment (two draws of each), then resumed (at most three times)
to completion.

Faults: the orchestrator SIGKILLed or SIGTERMed, a running cell SIGKILLed, status.tsv cut
mid-line, a stale lock file left by a dead process. After each, every cell finished before
the fault must be there unchanged (its results.json byte for byte, its identity's finish
stamp), every operator must end with both sides finished, the campaign complete and
`zl report` exit 0. Then: the runs root's disk filling up (a small tmpfs; exit 6, one line
naming the resume command, nothing lost once it grows), the vendor tool failing or hanging
mid-campaign (every cell after it refused by name, exit 6, none run without its device's
identity), a third-party plugin raising in every hook a screen or an A/B campaign calls, or hanging in
one (one line each, every cell finished), and SIGTERM or SIGINT while a screen or an A/B campaign
writes its finish (it stays `finishing`, the resume completes it with receipts that check). And a
pipelined A/B lane (`--pipeline 3`) with one running cell SIGKILLed at a seeded moment:
no two cells' holds of the device's timing gate overlap, nothing finished is lost. And the disk
under one operator's A/B cells filling at a seeded moment: exit 6 in one line, no verdict,
the resume completes it. The figures (faults injected, survived, results lost or
changed) are printed at the end of the run (tests/conftest.py)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_lanes_processes import LAUNCHER, alive, fake_env, ledger, wait_for

# Campaigns hit by faults and resumed, a dozen seconds each.
pytestmark = pytest.mark.slow

OPS = ["abs", "add", "mul", "sub", "exp", "log", "sin", "cos"]
FAULTS = ["orchestrator SIGKILL", "orchestrator SIGTERM", "cell SIGKILL", "status.tsv cut",
          "stale lock file"]
SEED = 20261204
TALLY = {"injected": 0, "survived": 0, "lost": 0, "changed": 0}


def zl(tmp_path: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LAUNCHER), *argv], env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.3"),
                          capture_output=True, text=True, check=False, timeout=timeout)


def finished_cells(campaign: Path) -> dict[str, tuple[str, str]]:
    """cell -> (sha256 of results.json, finish stamp) of every finished cell."""
    out = {}
    for ident_path in campaign.glob("*/[AB]/run_identity.json"):
        ident = json.loads(ident_path.read_text())
        results = ident_path.with_name("results.json")
        if ident.get("finished") and not ident.get("interrupted") and results.is_file():
            out[str(ident_path.parent.relative_to(campaign))] = (
                hashlib.sha256(results.read_bytes()).hexdigest(), ident["finished"])
    return out


def results_of(campaign: Path) -> dict[str, bytes]:
    """cell -> its results.json's bytes, for every cell of any kind that wrote one."""
    return {p.parent.relative_to(campaign).as_posix(): p.read_bytes() for p in campaign.rglob("results.json")}


def assert_kept(before: dict, after: dict) -> None:
    """Every cell finished before the fault is still there, unchanged; counted in TALLY."""
    lost = [cell for cell in before if cell not in after]
    changed = [cell for cell in before if cell in after and after[cell] != before[cell]]
    TALLY["lost"] += len(lost)
    TALLY["changed"] += len(changed)
    assert lost == [] and changed == []


def inject(fault: str, proc: subprocess.Popen, tmp_path: Path, campaign: Path, rng: random.Random) -> None:
    if fault == "orchestrator SIGKILL":
        proc.kill()
    elif fault == "orchestrator SIGTERM":
        proc.send_signal(signal.SIGTERM)
    elif fault == "cell SIGKILL":
        running = [int(r[4]) for r in ledger(tmp_path) if r[0] == "start" and alive(int(r[4]))]
        if running:
            os.kill(rng.choice(running), signal.SIGKILL)
        return  # the campaign goes on: the killed cell is retried as a crash
    elif fault == "status.tsv cut":
        proc.kill()
        status = campaign / "status.tsv"
        text = status.read_text()
        status.write_text(text[: len(text) - rng.randint(1, 20)])  # its last row cut mid-line
    elif fault == "stale lock file":
        proc.kill()
        proc.wait()
        lock_dir = Path(os.environ["ZL_LOCK_DIR"])  # each test's own (tests/conftest.py)
        lock_dir.mkdir(parents=True, exist_ok=True)
        (lock_dir / "cuda-0.lock").write_text("999999\n")  # a pid long gone, no flock held


@pytest.mark.parametrize("draw", [0, 1])
@pytest.mark.parametrize("fault", FAULTS)
def test_a_campaign_survives_each_fault_and_loses_no_finished_result(tmp_path, fault, draw):
    rng = random.Random(f"{SEED}-{fault}-{draw}")
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                             "FAKE_SWITCH", "--ops", *OPS, "--devices", "all"],
                            env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.3"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wanted = rng.randint(2, 10)  # finished cells before the fault
    assert wait_for(lambda: sum(1 for r in ledger(tmp_path) if r[0] == "end") >= wanted, timeout=60)
    (campaign,) = (tmp_path / "runs").glob("screen_*")
    # A cell's own end (the ledger) comes before the orchestrator stamps it finished.
    before = wait_for(lambda: finished_cells(campaign), timeout=60)
    assert before  # something to lose
    TALLY["injected"] += 1
    inject(fault, proc, tmp_path, campaign, rng)
    proc.communicate(timeout=60)
    for _ in range(3):
        state = json.loads((campaign / "campaign.json").read_text())["state"]
        if state == "complete":
            break
        resumed = zl(tmp_path, "screen", "--resume", str(campaign), "--devices", "all")
        assert resumed.returncode in (0, 6), resumed.stdout + resumed.stderr
    after = finished_cells(campaign)
    assert_kept(before, after)
    assert {f"{op}/{side}" for op in OPS for side in "AB"} <= set(after)
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    report = zl(tmp_path, "report", str(campaign))
    assert report.returncode == 0, report.stdout + report.stderr
    assert wait_for(lambda: not any(alive(int(r[4])) for r in ledger(tmp_path) if r[0] == "start"),
                    timeout=10)  # nothing of the campaign runs on
    TALLY["survived"] += 1


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("command", ["screen", "ab"])
def test_a_signal_in_the_finish_leaves_it_finishing_and_the_resume_completes_it(tmp_path, command, sig):
    """The window after the last cell: a real signal to a real zl while it writes the finish
    (summary.csv reads every cell, made slow here). The campaign stays `finishing`, nothing
    finished is lost, and the resume writes the finish: complete, receipts that check."""
    from zl_core.seal import receipts

    extra = ["--rounds", "4", "--telemetry-interval", "0"] if command == "ab" else []
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), command, "--suite", "sleepy", "--switch",
                             "FAKE_SWITCH", "--ops", "abs", "add", *extra],
                            env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.05", ZL_FAKE_SLOW_FINISH="2"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kind = "screen" if command == "screen" else "ab"

    def state():
        return next((json.loads(p.read_text()).get("state")
                     for p in (tmp_path / "runs").glob(f"{kind}_*/campaign.json")), None)

    assert wait_for(lambda: state() == "finishing", timeout=90)
    (campaign,) = (tmp_path / "runs").glob(f"{kind}_*")
    before = results_of(campaign)
    TALLY["injected"] += 1
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"complete them with: zl {command} --resume {campaign}" in err and "Traceback" not in err
    assert state() == "finishing" and not (campaign / "receipt.json").exists()
    resumed = zl(tmp_path, command, "--resume", str(campaign), *(["--telemetry-interval", "0"] if extra else []))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = results_of(campaign)
    assert_kept(before, after)
    assert state() == "complete" and receipts.check(campaign) == []
    assert (campaign / "summary.csv").is_file()
    TALLY["survived"] += 1


def figures(tally: dict | None = None) -> str:
    """The line tests/conftest.py prints at the end of the run (of this process's TALLY,
    or of the one its pytest-xdist workers add up to)."""
    tally = TALLY if tally is None else tally
    return (f"fault injection: {tally['injected']} faults injected, {tally['survived']} survived, "
            f"{tally['lost']} finished results lost, {tally['changed']} changed")


def _mount_tmpfs(path: Path, size_k: int) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_k}k", "tmpfs", str(path)],
                              capture_output=True, check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@pytest.mark.parametrize("draw", [0, 1])
def test_a_full_disk_ends_the_campaign_in_one_line_and_resume_loses_nothing(tmp_path, draw):
    """The runs root on a small tmpfs that fills at a seeded random moment, then grows."""
    rng = random.Random(f"{SEED}-disk full-{draw}")
    runs = tmp_path / "runs"
    if not _mount_tmpfs(runs, rng.randint(120, 240)):
        pytest.skip("cannot mount a tmpfs here (it needs root) to fill a disk")
    try:
        full = zl(tmp_path, "screen", "-q", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", *OPS,
                  "--devices", "all")  # -q: the error is the one line on stderr
        TALLY["injected"] += 1
        (campaign,) = runs.glob("screen_*")
        assert full.returncode == 6, full.stdout + full.stderr
        err = [ln for ln in full.stderr.splitlines() if ln.strip()]
        assert len(err) == 1 and "Traceback" not in full.stdout + full.stderr, full.stderr
        assert "No space left on device" in err[0]
        assert f"zl screen --resume {campaign}" in err[0]  # the hint names the way on, truly
        before = finished_cells(campaign)
        subprocess.run(["mount", "-o", "remount,size=64m", str(runs)], check=True, timeout=10)
        for _ in range(3):
            resumed = zl(tmp_path, "screen", "--resume", str(campaign), "--devices", "all")
            if json.loads((campaign / "campaign.json").read_text())["state"] == "complete":
                break
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        after = finished_cells(campaign)
        assert_kept(before, after)
        assert {f"{op}/{side}" for op in OPS for side in "AB"} <= set(after)
        assert zl(tmp_path, "report", str(campaign)).returncode == 0
        TALLY["survived"] += 1
    finally:
        subprocess.run(["umount", "-l", str(runs)], capture_output=True, check=False, timeout=10)


def _tool_wrapper(bin_dir: Path, flag: Path) -> None:
    """nvidia-smi as the fake host's until ``flag`` exists, then failing or hanging as it says."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    real = Path(LAUNCHER).parent / "bin" / "nvidia-smi"
    tool = bin_dir / "nvidia-smi"
    tool.write_text(f"""#!{sys.executable}
import os, sys, time
flag = {str(flag)!r}
if os.path.exists(flag):
    if open(flag).read() == "hang":
        time.sleep(120)
    sys.stderr.write("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\\n")
    sys.exit(9)
os.execv({str(real)!r}, [{str(real)!r}, *sys.argv[1:]])
""")
    tool.chmod(0o755)


@pytest.mark.parametrize("draw", [0, 1])
@pytest.mark.parametrize("how", ["fails", "hangs"])
def test_a_vendor_tool_that_breaks_mid_campaign_fails_the_cells_after_it_by_name(tmp_path, how, draw):
    rng = random.Random(f"{SEED}-vendor tool {how}-{draw}")
    flag = tmp_path / "smi-broken"
    _tool_wrapper(tmp_path / "bin", flag)
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.3", ZL_PLUGIN_TIMEOUT="1")
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                             "FAKE_SWITCH", "--ops", *OPS, "--devices", "all"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wanted = rng.randint(2, 10)
    assert wait_for(lambda: sum(1 for r in ledger(tmp_path) if r[0] == "end") >= wanted, timeout=60)
    (campaign,) = (tmp_path / "runs").glob("screen_*")
    before = finished_cells(campaign)
    TALLY["injected"] += 1
    flag.write_text("hang" if how == "hangs" else "fail")
    out, err = proc.communicate(timeout=300)
    after = finished_cells(campaign)
    assert_kept(before, after)
    rows = {r["op"]: r for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    failed = sorted(op for op, r in rows.items() if "check=vendor_tool" in r["notes"])
    assert "Traceback" not in out + err
    if failed:  # every cell after the break refused by name, none run without its device's identity
        assert proc.returncode == 6 and f"operator(s) failed: {', '.join(failed)}" in out + err, out + err
        # A hang is named where it was met: the tool itself, or the backend's hook that ran it.
        words = (("did not answer within 1s", "zl_device_identity did not finish within 1s") if how == "hangs"
                 else ("exited 9: NVIDIA-SMI has failed",))
        assert all(any(w in rows[op]["notes"] for w in words) for op in failed), [rows[op]["notes"] for op in failed]
    for cell in after:
        ident = json.loads((campaign / cell / "run_identity.json").read_text())
        assert ident.get("device_uuid", "").startswith("GPU-"), cell
    assert set(failed) | {op for op in OPS if {f"{op}/A", f"{op}/B"} <= set(after)} == set(OPS)
    TALLY["survived"] += 1


SCREEN_HOOKS = ("zl_providers", "zl_backends", "zl_enumerate_devices", "zl_device_identity")
PLUGIN_BOUND_S = 3


@pytest.mark.parametrize("broken", ["raise", *(f"hang:{hook}" for hook in SCREEN_HOOKS)])
def test_a_plugin_that_raises_or_hangs_in_a_hook_is_named_and_the_campaign_goes_on(tmp_path, broken):
    """A third-party plugin breaking in every hook a screen calls (or hanging in one): each
    failure is one line naming the plugin and the hook, and every cell still finishes."""
    TALLY["injected"] += 1
    # The bound every plugin call gets: short, as the test waits it out, yet long enough that
    # the real CUDA plugin's calls (a Python nvidia-smi stand-in) never reach it on a busy CI
    # machine (1 s did there once: zl_device_identity abandoned).
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.2", ZL_PLUGIN_TIMEOUT=str(PLUGIN_BOUND_S),
                   ZL_FAKE_BROKEN_PLUGIN=broken)
    done = subprocess.run([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                           "FAKE_SWITCH", "--ops", *OPS, "--devices", "all"], env=env,
                          capture_output=True, text=True, check=False, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    said = [ln for ln in done.stderr.splitlines() if "plugin brokenvendor:" in ln]
    if broken == "raise":
        assert sorted(ln.split("brokenvendor: ")[1].split()[0] for ln in said) == sorted(SCREEN_HOOKS)
        assert all("raised RuntimeError" in ln for ln in said)
    else:
        hook = broken.split(":")[1]
        assert said == [(f"zl screen: plugin brokenvendor: {hook} did not finish within {PLUGIN_BOUND_S}s (abandoned; "
                        "ZL_PLUGIN_TIMEOUT sets the bound); not asked again (its answer is skipped)")]
    (campaign,) = (tmp_path / "runs").glob("screen_*")
    assert {f"{op}/{side}" for op in OPS for side in "AB"} <= set(finished_cells(campaign))
    assert zl(tmp_path, "report", str(campaign)).returncode == 0
    TALLY["survived"] += 1


def test_a_plugin_raising_in_every_hook_an_ab_campaign_calls_is_named_and_the_rounds_go_on(tmp_path):
    """The telemetry hooks too (an A/B campaign samples the devices between cells)."""
    TALLY["injected"] += 1
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.1", ZL_FAKE_BROKEN_PLUGIN="raise", ZL_FAKE_OPS="abschanged")
    done = subprocess.run([sys.executable, str(LAUNCHER), "ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH",
                           "--ops", "abschanged", "--rounds", "4", "--telemetry-interval", "0.2"], env=env,
                          capture_output=True, text=True, check=False, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    hooks = sorted(ln.split("brokenvendor: ")[1].split()[0] for ln in done.stderr.splitlines()
                   if "plugin brokenvendor:" in ln)
    assert hooks == sorted([*SCREEN_HOOKS, "zl_telemetry_command", "zl_parse_telemetry"])
    (campaign,) = (tmp_path / "runs").glob("ab_*")
    cells = list(campaign.glob("abschanged/r*/[AB]/run_identity.json"))
    assert len(cells) == 8 and all(json.loads(p.read_text()).get("finished") for p in cells)
    assert zl(tmp_path, "report", str(campaign)).returncode == 0
    TALLY["survived"] += 1


ALL_HOOKS = ("zl_backends", "zl_enumerate_devices", "zl_device_identity", "zl_classify_capture_error",
             "zl_telemetry_command", "zl_parse_telemetry", "zl_compat_plugins", "zl_providers")


@pytest.mark.parametrize("how", ["raise", "hang"])
def test_zl_backends_names_a_plugin_broken_in_each_hook_of_the_api(tmp_path, how):
    """`zl backends` asks every hook once: the two a campaign here never calls (the capture
    classifier and the compat plugins, both asked for FlagGems cells) are covered too."""
    TALLY["injected"] += 1
    broken = "raise" if how == "raise" else "hang:zl_classify_capture_error,zl_compat_plugins"
    env = fake_env(tmp_path, ZL_PLUGIN_TIMEOUT="1", ZL_FAKE_BROKEN_PLUGIN=broken)
    done = subprocess.run([sys.executable, str(LAUNCHER), "backends"], env=env, capture_output=True,
                          text=True, check=False, timeout=120)
    assert "Traceback" not in done.stdout + done.stderr
    said = {ln.split("brokenvendor: ")[1].split()[0] for ln in done.stderr.splitlines()
            if "plugin brokenvendor:" in ln}
    if how == "raise":  # every hook but the device identity, which the screens above cover
        assert said == set(ALL_HOOKS) - {"zl_device_identity"}
    else:  # the first hang is named; the plugin is not asked again, so the second never hangs
        assert len(said) == 1 and said <= {"zl_classify_capture_error", "zl_compat_plugins"}
    assert "brokenvendor" in done.stdout and "cuda" in done.stdout  # listed broken; the rest answer
    TALLY["survived"] += 1


@pytest.mark.parametrize("draw", [0, 1, 2])
def test_a_pipelined_cell_killed_at_any_moment_never_lets_two_cells_time_at_once(tmp_path, draw):
    """``zl ab --pipeline 3`` on one device, one running cell SIGKILLed at a seeded moment:
    it may hold the timing gate, wait for it or still be starting. The kernel opens the
    gate as it dies, the campaign goes on or stops resumable, and no two cells' holds of
    the gate overlap (from each cell's own record, closed at the exit zl saw)."""
    from zl_core.interface import caliber, phases, timing_gate

    rng = random.Random(f"{SEED}-pipeline-{draw}")
    argv = ["ab", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", *OPS[:4], "--rounds", "4",
            "--allow-no-ir-diff", "--device", "0", "--pipeline", "3", "--telemetry-interval", "0"]
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), *argv],
                            env=fake_env(tmp_path, ZL_FAKE_SLEEP="0.3"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wanted = rng.randint(2, 12)
    assert wait_for(lambda: sum(1 for r in ledger(tmp_path) if r[0] == "start") >= wanted, timeout=60)
    running = [int(r[4]) for r in ledger(tmp_path) if r[0] == "start" and alive(int(r[4]))]
    TALLY["injected"] += 1
    if running:
        os.kill(rng.choice(running), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 6), out + err
    (campaign,) = (tmp_path / "runs").glob("ab_*")
    before = results_of(campaign)
    for _ in range(3):
        if json.loads((campaign / "campaign.json").read_text())["state"] == "complete":
            break
        resumed = zl(tmp_path, "ab", "--resume", str(campaign), "--telemetry-interval", "0")
        assert resumed.returncode in (0, 6), resumed.stdout + resumed.stderr
    after = results_of(campaign)
    assert_kept(before, after)
    holds = []
    for ident_path in campaign.glob("*/r*/*/run_identity.json"):
        gate = (caliber.read_identity(ident_path.parent).get(phases.KEY) or {}).get(timing_gate.KEY)
        for start, end in (gate or {}).get("held", []):
            holds.append((start, end, ident_path.parent))
    holds.sort(key=lambda h: h[0])
    assert len(holds) >= 8
    for (_, end, who), (start, _, other) in itertools.pairwise(holds):
        assert start >= end, f"{who} and {other} held the gate at once"
    assert wait_for(lambda: not any(alive(int(r[4])) for r in ledger(tmp_path) if r[0] == "start"),
                    timeout=10)
    TALLY["survived"] += 1


@pytest.mark.parametrize("draw", [0, 1])
def test_a_disk_that_fills_under_a_cell_stops_the_campaign_and_the_resume_loses_nothing(tmp_path, draw):
    """A/B rounds on the fake host's lanes; at a seeded moment the disk under the cells of
    "diskfull" fills (its cells then fail as Python does on ENOSPC): the campaign stops,
    exit 6 in one line naming the cell and --resume, no verdict; once the disk has room
    the resume completes it with every finished result unchanged."""
    rng = random.Random(f"{SEED}-celldisk-{draw}")
    full = tmp_path / "disk-is-full"
    ops = ["abs", "diskfull", "mul", "sub"]
    env = fake_env(tmp_path, ZL_FAKE_SLEEP="0.2", ZL_FAKE_OPS=" ".join(ops), ZL_FAKE_DISK_FULL=str(full))
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "ab", "--suite", "sleepy", "--switch",
                             "FAKE_SWITCH", "--ops", *ops, "--rounds", "4", "--allow-no-ir-diff",
                             "--devices", "all", "--telemetry-interval", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wanted = rng.randint(1, 4)  # diskfull's cells that finish before its disk fills
    assert wait_for(lambda: sum(1 for r in ledger(tmp_path) if r[0] == "end" and r[2] == "diskfull") >= wanted,
                    timeout=60)
    TALLY["injected"] += 1
    full.touch()
    _, err = proc.communicate(timeout=120)
    (campaign,) = (tmp_path / "runs").glob("ab_*")
    if proc.returncode == 6:  # the fault landed before diskfull's last cell
        lines = [ln for ln in err.splitlines() if "stopped on a disk fault" in ln]
        assert len(lines) == 1 and f"zl ab --resume {campaign}" in lines[0] and "Traceback" not in err
        assert json.loads((campaign / "campaign.json").read_text())["state"] == "interrupted"
    else:
        assert proc.returncode == 0, err
    before = results_of(campaign)
    full.unlink()  # room again
    resumed = subprocess.run([sys.executable, str(LAUNCHER), "ab", "--resume", str(campaign),
                              "--telemetry-interval", "0"], env=env, capture_output=True, text=True,
                             check=False, timeout=180)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = results_of(campaign)
    assert_kept(before, after)
    assert {f"{op}/r0{r}/{s}" for op in ops for r in (1, 2, 3, 4) for s in "AB"} <= set(after)
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
    TALLY["survived"] += 1
