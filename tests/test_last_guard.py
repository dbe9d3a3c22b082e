"""No traceback reaches the user: an exception nothing else catches (a bug of zl or of a
plugin) ends the command with one line naming the file that keeps its traceback, exit 70
(zl_core.app.crash); a campaign.json nested past any record zl writes is a corrupt file,
exit 2, not a RecursionError."""

from __future__ import annotations

import os
import subprocess
import sys

from zl_core.cli import main


def test_an_unexpected_error_is_one_line_and_its_traceback_is_kept(tmp_path, monkeypatch, capsys):
    import zl_core.cli.backends as backends_cli

    def broken(args):
        raise KeyError("a bug")

    monkeypatch.setattr(backends_cli, "run", broken)
    (tmp_path / "runs").mkdir()
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "runs"))
    assert main(["backends"]) == 70  # main builds its parser anew: the patched handler runs
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    [kept] = (tmp_path / "runs" / "zl-errors").iterdir()
    assert line == (f"zl backends: internal error (KeyError: 'a bug'); its traceback is in {kept}: "
                    "please report it with that file (a campaign left unfinished continues with --resume)")
    text = kept.read_text()
    assert text.startswith("zl backends\nTraceback") and "KeyError: 'a bug'" in text and "def broken" not in line


def test_without_a_runs_root_the_traceback_goes_to_the_cache(tmp_path, monkeypatch, capsys):
    import zl_core.cli.backends as backends_cli

    monkeypatch.setattr(backends_cli, "run", lambda args: 1 / 0)
    monkeypatch.setenv("ZL_RUNS_ROOT", str(tmp_path / "none"))
    monkeypatch.setenv("ZL_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["backends"]) == 70
    assert not (tmp_path / "none").exists()  # no runs root is made for it
    [kept] = (tmp_path / "cache" / "errors").iterdir()
    assert f"its traceback is in {kept}" in capsys.readouterr().err


def test_a_campaign_json_nested_past_any_record_is_corrupt_not_a_crash(tmp_path):
    campaign = tmp_path / "screen_X_20261207-000000"
    campaign.mkdir()
    (campaign / "campaign.json").write_text("[" * 100_000 + "]" * 100_000)
    env = {k: v for k, v in os.environ.items() if k != "ZL_RUNS_ROOT"}
    done = subprocess.run([sys.executable, "-m", "zl_core", "screen", "--resume", str(campaign)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert [ln for ln in done.stderr.splitlines() if ln.strip()] == [
        f"zl screen: corrupt {campaign / 'campaign.json'}: nested too deeply to be a campaign record"]
    assert (campaign / "campaign.json").stat().st_size == 200_000  # read, never rewritten


def _zl(tmp_path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "ZL_RUNS_ROOT"}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "zl_core", *argv], capture_output=True, text=True,
                          env=environ, cwd=tmp_path, timeout=120, check=False)


def test_a_runs_root_through_a_loop_of_links_is_refused_in_one_line(tmp_path):
    (tmp_path / "one").symlink_to(tmp_path / "two")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    done = _zl(tmp_path, "screen", "--compile-only", "--backend", "cuda", "--switch", "DISABLE_MMA_V3",
               "--ops", "add", "--runs-root", str(tmp_path / "one" / "runs"))
    assert done.returncode == 2
    (line,) = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert line.startswith(f"zl screen: runs root {tmp_path / 'one' / 'runs'} cannot be resolved (")
    assert line.endswith("a symbolic link on its way leads in a loop: fix the links, or pass --runs-root elsewhere")


def test_a_path_the_terminal_cannot_encode_is_printed_escaped(tmp_path):
    folder = tmp_path / "ünï"
    done = _zl(tmp_path, "report", str(folder), PYTHONIOENCODING="ascii")
    assert done.returncode == 2 and "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert str(tmp_path / "\\xfcn\\xef") in done.stderr
