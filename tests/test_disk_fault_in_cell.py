"""A full, read-only or over-quota disk inside a cell (its Triton cache, its TMPDIR) is the
machine's fault, never a verdict on the code: the campaign stops on one line naming the
cell, the disk's words and --resume (exit 6), the cell is left unfinished, and once the
disk has room the resume reruns that cell and completes the campaign. Real cells of the
fake host's sleepy suite; the disk's fault is the line Python prints for it."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def zl(lanes_main, monkeypatch):
    monkeypatch.setenv("ZL_FAKE_SLEEP", "0.05")
    monkeypatch.setenv("ZL_FAKE_OPS", "abs diskfull mul")
    return lanes_main


def test_a_full_disk_in_a_cell_stops_the_campaign_resumably(zl, tmp_path, monkeypatch, capsys):
    full = tmp_path / "disk-is-full"
    full.touch()
    monkeypatch.setenv("ZL_FAKE_DISK_FULL", str(full))
    argv = ["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs", "diskfull", "mul"]
    assert zl(argv) == 6
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("zl screen:")]
    [campaign] = (tmp_path / "runs").glob("screen_*")
    assert err[-1] == (f"zl screen: cell {campaign / 'diskfull' / 'A'} stopped on a disk fault, not on its "
                       f"code: [Errno 28] No space left on device: '{campaign / 'diskfull' / 'A'}/.triton_cache/"
                       "kernel.ttgir'; free space or fix that disk, then continue it with zl screen --resume "
                       f"{campaign} (finished cells are kept; this one reruns)")
    meta = json.loads((campaign / "campaign.json").read_text())
    assert meta["state"] == "interrupted"
    identity = json.loads((campaign / "diskfull" / "A" / "run_identity.json").read_text())
    assert identity["interrupted"] == "disk" and "finished" not in identity
    assert not (campaign / "screen.json").is_file() or "FAILED" not in (campaign / "screen.json").read_text()
    full.unlink()  # room again
    capsys.readouterr()
    assert zl(["screen", "--resume", str(campaign)]) == 0
    rows = {r["op"]: r["verdict"] for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    assert set(rows) == {"abs", "diskfull", "mul"} and "FAILED" not in rows.values()
    assert json.loads((campaign / "campaign.json").read_text())["state"] == "complete"


def _mount(path, *options: str) -> bool:
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(["size=16m", *options]), "tmpfs",
                               str(path)], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def test_a_resume_on_a_read_only_mount_names_that_mount_and_the_campaign(zl, tmp_path, monkeypatch, capsys):
    """The hint names what exists: the campaign's own runs root, read-only as the fault,
    and the campaign to resume (not 'free space', not a campaign that does not exist)."""
    import subprocess

    mount = tmp_path / "mnt"
    if not _mount(mount):
        pytest.skip("cannot mount a tmpfs here (it needs root)")
    try:
        assert zl(["screen", "--suite", "sleepy", "--switch", "FAKE_SWITCH", "--ops", "abs"]) == 0
        [original] = (tmp_path / "runs").glob("screen_*")
        meta = json.loads((original / "campaign.json").read_text())
        meta["state"] = "interrupted"  # as a kill would leave it
        (original / "campaign.json").write_text(json.dumps(meta))
        # A copy kept on a mount that is then made read-only (an archive, a snapshot).
        subprocess.run(["cp", "-a", str(tmp_path / "runs"), str(mount)], check=True, timeout=30)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, timeout=10)
        campaign = mount / "runs" / original.name
        capsys.readouterr()
        assert zl(["screen", "--resume", str(campaign)]) == 6
        line = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("zl screen:")][-1]
        assert line.startswith(f"zl screen: cannot write the campaign under {mount / 'runs'}: Read-only file system")
        assert line.endswith(f"its file system is mounted read-only: make it writable, then continue it with "
                             f"zl screen --resume {campaign} (its finished cells are kept), or pass --runs-root "
                             "elsewhere")
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False, timeout=10)
