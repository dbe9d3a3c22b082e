"""What a FlagGems-layout checkout is, as the host sees it: the package it holds, the
PYTHONPATH its cells run with, the commit that identifies it and its uncommitted
changes. The provider and its sealing both ask these questions, so they live here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from zl_core.foundation.errors import ZlError

#: The packages a FlagGems-layout checkout may hold under src/, and the name its
#: operators carry when it is not the first source: FlagGems (flag_gems) and
#: FlagGems-vllm (flaggems_vllm) share the benchmark layout.
PACKAGES = {"flag_gems": "main", "flaggems_vllm": "vllm"}

def gems_package(root: Path) -> str:
    """The FlagGems package a checkout holds (``flag_gems`` when it holds none we know)."""
    return next((name for name in PACKAGES if (Path(root) / "src" / name).is_dir()), "flag_gems")


def cell_pythonpath(root: Path, existing: str) -> str:
    """A cell's PYTHONPATH: the checkout's src/ (its package) and root first."""
    paths = [str(root / "src"), str(root)] + [p for p in existing.split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(paths))


def _git_commit(root: Path, timeout: float = 10.0) -> str | None:
    """HEAD of ``root`` when ``root`` itself is a git work tree's top level.

    A FlagGems copy placed inside another repository (e.g. zl's own checkout)
    must not report that repository's commit, hence the top-level comparison.
    """
    git = shutil.which("git")
    if git is None:
        return None
    try:
        proc = subprocess.run([git, "-C", str(root), "rev-parse", "--show-toplevel", "HEAD"],
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.split()
    if proc.returncode != 0 or len(lines) != 2:
        return None
    try:
        if Path(lines[0]).resolve() != root.resolve():
            return None
    except OSError:
        return None
    return lines[1] if re.fullmatch(r"[0-9a-f]{40,64}", lines[1]) else None


def provider_commit(root: Path) -> str | None:
    """The checkout's commit: git HEAD, else the first word of a COMMIT file, else None."""
    commit = _git_commit(root)
    if commit:
        return commit
    marker = root / "COMMIT"
    if marker.is_file():
        try:
            words = marker.read_text(encoding="utf-8", errors="replace").split()
        except OSError:
            return None
        return words[0] if words else None
    return None




def uncommitted_changes(root: Path) -> list[str]:
    """Tracked files changed and not committed (``git status``), which a commit cannot
    vouch for; [] where ``root`` is not a git work tree; ZlError where it is one and git
    cannot answer, which is never read as clean."""
    if not (root / ".git").exists():
        return []
    git = shutil.which("git")
    if git is None:
        raise ZlError(f"{root} is a git checkout but git is not on PATH, so its "
                      "uncommitted changes cannot be listed; install git")
    try:
        proc = subprocess.run([git, "-C", str(root), "status", "--porcelain",
                               "--untracked-files=no"], capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ZlError(f"git status in {root} failed ({exc}); its uncommitted "
                      "changes cannot be listed") from exc
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise ZlError(f"git status in {root} failed ({why}); its uncommitted "
                      "changes cannot be listed")
    return [line[3:] for line in proc.stdout.splitlines() if len(line) > 3]
