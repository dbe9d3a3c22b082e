"""Files zl reads whole are regular files of a bounded size (zl_core.foundation.small_files): a
manifest that is /dev/zero, a campaign.json, dismiss list or configuration file that is a
named pipe, or one far too large is refused in one line, at once,
exit 2, instead of growing until the kernel kills zl or blocking for ever."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def zl(cwd, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ZL_RUNS_ROOT", "FLAGGEMS_DIR")}
    return subprocess.run([sys.executable, "-m", "zl_core", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)


def one_line(done: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_manifest_that_is_dev_zero_is_refused_at_once(tmp_path):
    done = zl(tmp_path, "freeze", "/dev/zero", "--out", str(tmp_path / "frozen"))
    assert done.returncode == 2
    assert one_line(done) == ("zl freeze: manifest /dev/zero is a device, not a file; give the path of a "
                              "manifest YAML file (it lists workloads, not data)")
    assert not (tmp_path / "frozen").exists()


def test_a_manifest_far_too_large_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * ((1 << 20) + 1))
    done = zl(tmp_path, "freeze", str(big), "--out", str(tmp_path / "frozen"))
    assert done.returncode == 2
    assert one_line(done).startswith(f"zl freeze: manifest {big} is over 1 MiB, larger than such a file ever is")


def test_a_campaign_json_that_is_a_named_pipe_blocks_neither_a_report_nor_a_resume(tmp_path):
    campaign = tmp_path / "runs" / "screen_X_20261207-000000"
    campaign.mkdir(parents=True)
    os.mkfifo(campaign / "campaign.json")  # no writer will ever come
    done = zl(tmp_path, "report", str(campaign))
    assert done.returncode == 2
    assert one_line(done) == (f"zl report: {campaign} has no campaign.json; give a screen or A/B "
                              "campaign folder (or two cells with --ab A_DIR B_DIR)")
    resumed = zl(tmp_path, "screen", "--resume", str(campaign))
    assert resumed.returncode == 2
    assert one_line(resumed) == (f"zl screen: {campaign / 'campaign.json'} is a named pipe, not a file; "
                                 f"is {campaign} a campaign folder?")


def test_a_dismiss_list_that_is_a_named_pipe_is_refused(tmp_path):
    fifo = tmp_path / "dismiss.txt"
    os.mkfifo(fifo)
    done = zl(tmp_path, "screen", "--compile-only", "--backend", "cuda", "--switch", "DISABLE_MMA_V3",
              "--ops", "add", "--dismiss", str(fifo), "--runs-root", str(tmp_path / "runs"))
    assert done.returncode == 2
    assert one_line(done) == (f"zl screen: --dismiss {fifo} is a named pipe, not a file; it lists "
                              "operators, one 'op  reason' a line")
    assert not (tmp_path / "runs").exists()


def test_a_configuration_file_that_is_a_named_pipe_is_refused(tmp_path):
    fifo = tmp_path / "zl.yaml"
    os.mkfifo(fifo)
    done = zl(tmp_path, "screen", "--plan", "--compile-only", "--backend", "cuda", "--ops", "add",
              "--config", str(fifo))
    assert done.returncode == 2
    assert one_line(done) == (f"zl screen: --config {fifo}: it is a named pipe, not a file; name a "
                              "configuration file, or drop --config")
    (tmp_path / ".git").mkdir()  # found by discovery, a pipe is not a configuration file
    found = zl(tmp_path, "screen", "--plan", "--compile-only", "--backend", "cuda", "--ops", "add")
    assert found.returncode == 0 and "configuration" not in found.stderr
