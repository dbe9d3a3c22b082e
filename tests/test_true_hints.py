"""Every hint that names a next step is true for the situation it is printed in: a device-lock
folder that is a file is named as such (not "free space"), a campaign another process runs
now is "still running" (not "resume it"), and once that process is gone, resuming is the
hint. Real zl processes on the fake 4-GPU host."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from test_lanes_processes import LAUNCHER, fake_env, wait_for


def zl(tmp_path, *argv, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LAUNCHER), *argv], env=fake_env(tmp_path, **env),
                          capture_output=True, text=True, check=False, timeout=120)


def test_a_lock_folder_that_is_a_file_is_named_before_any_cell(tmp_path):
    lock = tmp_path / "locks"
    lock.write_text("not a folder")
    done = zl(tmp_path, "screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs",
              "--devices", "all", ZL_LOCK_DIR=str(lock))
    assert done.returncode == 2
    err = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert err == [(f"zl screen: the device-lock folder {lock} ($ZL_LOCK_DIR) is a file, not a folder; "
                   "remove it or set $ZL_LOCK_DIR to a folder")]
    assert "free space" not in done.stdout + done.stderr
    assert not (tmp_path / "runs").exists()  # nothing planned, nothing written
    assert lock.read_text() == "not a folder"


@pytest.mark.slow
def test_a_live_campaign_is_still_running_and_a_dead_one_is_to_be_resumed(tmp_path):
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "screen", "--suite", "sleepy", "--switch",
                             "FAKE_SWITCH", "--ops", "abs", "add"], env=fake_env(tmp_path, ZL_FAKE_SLEEP="60"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: list((tmp_path / "runs").glob("screen_*/campaign.json")), timeout=30)
        (meta_path,) = (tmp_path / "runs").glob("screen_*/campaign.json")
        campaign = meta_path.parent
        assert wait_for(lambda: json.loads(meta_path.read_text()).get("state") == "running", timeout=30)
        report = zl(tmp_path, "report", str(campaign))
        assert report.returncode == 6
        assert f"It is still running (pid {proc.pid}); wait for it to end" in report.stderr
        assert "--resume" not in report.stderr
        resume = zl(tmp_path, "screen", "--resume", str(campaign))
        assert resume.returncode == 2 and "is still running" in resume.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 143
    report = zl(tmp_path, "report", str(campaign))
    assert report.returncode == 6
    assert f"Finish it with zl screen --resume {campaign}" in report.stderr
