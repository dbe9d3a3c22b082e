"""The device-lock folder is one per user and host (zl_core.cells.devicelock): the same whatever
TMPDIR or XDG_RUNTIME_DIR a process has, so a batch job and a login shell of one user never
time one device at once; in /tmp it is used only when it is this user's own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from zl_core.cells import devicelock
from zl_core.foundation.errors import UsageError


def _lock_dir_of(tmp_path, **env) -> str:
    child = {k: v for k, v in os.environ.items() if k not in ("ZL_LOCK_DIR", "XDG_RUNTIME_DIR", "TMPDIR")}
    child.update(env)
    done = subprocess.run([sys.executable, "-c", "from zl_core.cells.devicelock import lock_dir; print(lock_dir())"],
                          env=child, capture_output=True, text=True, check=True, cwd=tmp_path)
    return done.stdout.strip()


def test_two_processes_with_other_temporary_folders_share_one_lock_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = _lock_dir_of(tmp_path, TMPDIR=str(tmp_path / "a"))
    other = _lock_dir_of(tmp_path, TMPDIR=str(tmp_path / "b"), XDG_RUNTIME_DIR=str(tmp_path / "b"))
    plain = _lock_dir_of(tmp_path)
    assert one == other == plain == f"/tmp/zl-locks-{os.getuid()}"


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch):
    monkeypatch.delenv("ZL_LOCK_DIR", raising=False)
    monkeypatch.setattr(devicelock, "SHARED_TMP", tmp_path)
    return tmp_path / f"zl-locks-{os.getuid()}"


def test_the_default_folder_is_made_private(shared_tmp):
    assert devicelock.check_lock_dir() == shared_tmp
    assert shared_tmp.stat().st_mode & 0o777 == 0o700


def test_a_default_folder_others_can_write_into_is_refused(shared_tmp):
    shared_tmp.mkdir(mode=0o700)
    shared_tmp.chmod(0o777)
    with pytest.raises(UsageError, match="belongs to another user or others can write into it"):
        devicelock.check_lock_dir()


def test_a_link_in_place_of_the_default_folder_is_refused(shared_tmp, tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    shared_tmp.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="is a symbolic link"):
        devicelock.check_lock_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user owns needs root")
def test_a_default_folder_another_user_owns_is_refused(shared_tmp):
    shared_tmp.mkdir(mode=0o700)
    os.chown(shared_tmp, 12345, 12345)
    with pytest.raises(UsageError, match="belongs to another user"):
        devicelock.check_lock_dir()
