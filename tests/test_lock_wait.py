"""A wait for a device another zl process holds is said on the console, with the holder,
and bounded by --lock-timeout (exit 7); the campaign can be resumed once the device is free
(real processes: the holder is another interpreter, the cells tests/fake_cell.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from zl_core.cli import main

HOLDER = ("import sys, time\nfrom zl_core.cells.devicelock import DeviceLock\n"
          "lock = DeviceLock('fakegpu', '0')\nassert lock.try_acquire()\n"
          "print('held', flush=True)\nsys.stdin.read()\n")


def test_a_busy_device_is_waited_for_visibly_and_only_up_to_the_lock_timeout(fake_host, tmp_path, capsys):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert holder.stdout.readline().strip() == "held"
        root = tmp_path / "runs"
        rc = main(["screen", "--suite", "fake", "--ops", "gemm", "--lock-timeout", "1.5",
                   "--runs-root", str(root)])
        out, err = capsys.readouterr()
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert rc == 7
    assert f"gemm A: device fakegpu:0 is busy (held by pid {holder.pid}); waiting (up to 1.5s, --lock-timeout)" in err
    assert "waiting" not in out  # progress, not a result
    assert f"stayed busy (held by pid {holder.pid}) for 1.5s (--lock-timeout)" in err
    (campaign,) = root.glob("screen_*")
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "interrupted"
    # The device is free now: the campaign goes on where it stopped.
    assert main(["screen", "--resume", str(campaign)]) == 0
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"
