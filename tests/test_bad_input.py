"""Bad input never crashes: one line naming what is wrong and what to do, the exit code
docs/exit-codes.md gives, no traceback, and nothing written where nothing should be. Run through
the real ``zl`` command line with the installed plugins, or an in-test suite whose
cells are real processes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import zl_core.plugins.host as host_module
from zl_core import Backend, PluginHost, hookimpl
from zl_core.app.inputs import check_runs_root
from zl_core.cli import main
from zl_core.foundation.errors import BadInputError
from zl_core.interface.provider import CellCommand, OpInfo, Provider


@pytest.fixture
def installed(monkeypatch):
    monkeypatch.delenv("ZL_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("FLAGGEMS_DIR", raising=False)
    monkeypatch.delenv("ZL_RUNS_ROOT", raising=False)
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())


def one_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def zl(*argv: str) -> int:
    """zl's exit code, whether it returns it or argparse exits with it."""
    try:
        return main(list(argv))
    except SystemExit as exc:
        return int(exc.code)


def zl_screen(root: Path, *args: str) -> int:
    return zl("screen", "--compile-only", "--backend", "cuda", "--switch", "DISABLE_MMA_V3",
              "--runs-root", str(root), *args)


# -- the runs root ------------------------------------------------------------------------


def test_a_runs_root_that_is_a_file(installed, tmp_path, capsys):
    (tmp_path / "runs").write_text("not a folder")
    assert zl_screen(tmp_path / "runs", "--ops", "add") == 2
    assert "runs root" in (line := one_line(capsys)) and "is a file, not a folder" in line
    assert "--runs-root" in line
    assert (tmp_path / "runs").read_text() == "not a folder"


def test_a_runs_root_under_a_file(installed, tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert zl_screen(tmp_path / "f" / "runs", "--ops", "add") == 2
    assert f"is under {tmp_path / 'f'}, which is a file" in one_line(capsys)


def test_a_runs_root_under_proc(installed, capsys):
    assert zl_screen(Path("/proc/zl-runs"), "--ops", "add") == 2
    assert "is under /proc, which holds no files of its own" in one_line(capsys)
    assert not os.path.exists("/proc/zl-runs")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_an_unwritable_runs_root(installed, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    assert zl_screen(locked / "runs", "--ops", "add") == 2
    assert "cannot be written by this user" in one_line(capsys)
    assert list(locked.iterdir()) == []


def test_a_read_only_filesystem_is_named(tmp_path, monkeypatch):
    # A read-only mount cannot be made without privileges: its statvfs answer stands in.
    real = os.statvfs(tmp_path)

    class ReadOnly:
        f_flag = real.f_flag | os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda path: ReadOnly())
    with pytest.raises(BadInputError, match="is on a read-only filesystem"):
        check_runs_root(tmp_path / "runs")


# -- names, operators, dtypes ----------------------------------------------------------------


@pytest.mark.parametrize("args, needle", [
    (["--ops", "a" * 250], "op name of 250 characters (aaaaaaaaaaaaaaaaaaaaaaaa...)"),
    (["--ops", "nope"], "unknown operator 'nope' in the builtin suite"),
    (["--ops", "sofmax"], "close names: softmax"),
    (["--ops", "mm:mm:notadtype"], "operator mm has no dtype 'notadtype'"),
    (["--ops", "mm:mm:float32"], "its benchmark runs float16, bfloat16"),
    (["--ops", "softmax:mm"], "is defined in softmax (spec softmax:softmax)"),
    (["--ops", "add", "--timeout", "nan"], "argument --timeout: expected a number, got 'nan'"),
    (["--ops", "add", "--timeout", "inf"], "argument --timeout: expected a number, got 'inf'"),
])
def test_bad_names_and_values_stop_before_any_cell(args, needle, installed, tmp_path, capsys):
    assert zl_screen(tmp_path / "runs", *args) == 2
    line = one_line(capsys)
    assert needle in line, line
    assert not (tmp_path / "runs").exists()


def test_an_empty_switch_is_not_the_default_switch(installed, tmp_path, capsys):
    assert main(["screen", "--compile-only", "--backend", "cuda", "--switch", "", "--ops", "add",
                 "--runs-root", str(tmp_path / "runs")]) == 2
    assert "--switch is empty" in one_line(capsys)
    assert not (tmp_path / "runs").exists()


def test_a_switch_name_of_250_characters(installed, tmp_path, capsys):
    assert zl_screen(tmp_path / "runs", "--ops", "add", "--switch", "S" * 250) == 2
    assert "switch name of 250 characters" in one_line(capsys)
    assert not (tmp_path / "runs").exists()


def test_adaptive_rounds_need_a_budget_that_reaches_the_first_look(installed, tmp_path, capsys):
    assert main(["ab", "--ops", "add", "--rounds", "auto", "--max-rounds", "1",
                 "--runs-root", str(tmp_path / "runs")]) == 2
    assert "first looks at round 4; pass --max-rounds 4 or more" in one_line(capsys)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("rounds", ["1", "3"])
def test_fixed_rounds_below_one_look_are_refused(installed, tmp_path, capsys, rounds):
    assert main(["ab", "--ops", "add", "--rounds", rounds, "--runs-root", str(tmp_path / "runs")]) == 2
    line = one_line(capsys)
    assert f"--rounds {rounds}: a verdict needs at least 4 rounds" in line and "--rounds 4 or more" in line
    assert not (tmp_path / "runs").exists()


# -- a broken FlagGems checkout: exit 3 before any cell ----------------------------------------


@pytest.mark.parametrize("make, needle", [
    (lambda p: None, "FlagGems directory does not exist"),
    (lambda p: p.write_text("x"), "is a file, not a FlagGems checkout"),
    (lambda p: p.mkdir(), "is an empty folder, not a FlagGems checkout"),
])
def test_a_broken_flaggems_dir_fails_its_preflight_before_any_cell(make, needle, installed, tmp_path,
                                                                   capsys):
    checkout = tmp_path / "FlagGems"
    make(checkout)
    rc = main(["screen", "--ops", "topk", "--flaggems-dir", str(checkout), "--device", "0",
               "--backend", "cuda", "--switch", "DISABLE_MMA_V3", "--runs-root", str(tmp_path / "runs")])
    assert rc == 3
    line = one_line(capsys)
    assert "PREFLIGHT_FAILED check=flaggems_dir" in line and needle in line, line
    assert not (tmp_path / "runs").exists()


# -- cells that fail, and a disk that fills mid-screen ----------------------------------------------

CELL = """
import os, sys
from pathlib import Path
cell = Path(os.environ["ZL_CELL_DIR"])
op = os.environ["ZL_OP"]
if op == "crash":
    print("the kernel crashed")
    sys.exit(1)
if op == "fill":
    # The disk fills while this cell runs: the campaign's next write hits it.
    status = cell.parents[1] / "status.tsv"
    status.unlink(missing_ok=True)
    status.symlink_to("/dev/full")
"""


class Failing(Provider):
    name = "failing"

    def list_ops(self, source):
        return [OpInfo(op=o, op_file=o) for o in ("crash", "fill", "fine", "unreadable")]

    def read_rows(self, cell_dir):
        if "unreadable" in str(cell_dir):  # a provider bug, or a result it cannot parse
            raise ValueError("results.json: row 3 has no 'status'")
        return super().read_rows(cell_dir)

    def preflight(self, request, host=None):
        pass

    def cell_command(self, request, host=None):
        return CellCommand(argv=(sys.executable, "-c", CELL), cwd=Path(request.out_dir))


class Vendor:
    @hookimpl
    def zl_backends(self):
        return [Backend(name="failgpu", visibility_env_keys=("FAILGPU_VISIBLE",), default_switch="FAIL_SWITCH")]

    @hookimpl
    def zl_enumerate_devices(self, backend, explicit):
        return ["0"] if backend.name == "failgpu" else None

    @hookimpl
    def zl_providers(self):
        return [Failing()]


@pytest.fixture
def failing(monkeypatch):
    host = PluginHost()
    host.register(Vendor(), name="failvendor", package="tests", version="0")
    monkeypatch.setattr(host_module, "_HOST", host)
    monkeypatch.delenv("ZL_BACKEND", raising=False)


def test_a_campaign_whose_cells_failed_does_not_exit_0(failing, tmp_path, capsys):
    rc = main(["screen", "--suite", "failing", "--ops", "crash", "fine", "--runs-root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 6 and "Traceback" not in out + err
    assert "zl screen: 1 operator(s) failed: crash (exit 6" in err and "failed: crash" not in out


def test_a_cell_whose_rows_the_provider_cannot_read_fails_with_the_reason(failing, tmp_path, capsys):
    rc = main(["screen", "--suite", "failing", "--ops", "unreadable", "fine", "--runs-root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 6 and "Traceback" not in out + err
    assert "zl screen: 1 operator(s) failed: unreadable (exit 6" in err
    (campaign,) = tmp_path.glob("screen_*")
    rows = {r["op"]: r for r in json.loads((campaign / "screen.json").read_text())["ops"]}
    assert rows["unreadable"]["verdict"] == "FAILED"  # not NO_ROWS: nothing says it measured nothing
    why = "suite failing could not read the cell's rows: ValueError: results.json: row 3 has no 'status'"
    assert why in rows["unreadable"]["notes"]
    assert why in (campaign / "unreadable" / "A" / "run.log").read_text()
    assert rows["fine"]["verdict"] != "FAILED"


def test_a_disk_that_fills_mid_screen_ends_on_one_line_not_0(failing, tmp_path, capsys):
    # -q: no progress on stderr, so the one line there is the error
    rc = main(["screen", "-q", "--suite", "failing", "--ops", "fill", "fine", "--runs-root", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 6 and "Traceback" not in out + err
    (line,) = [ln for ln in err.splitlines() if ln.strip()]
    assert line.startswith(f"zl screen: cannot write the campaign under {tmp_path}: No space left "
                           "on device; free space there, then continue it with zl screen --resume "
                           f"{tmp_path}/screen_")  # the campaign it wrote, not "run it again"
    assert line.endswith("(its finished cells are kept), or pass --runs-root elsewhere")


@pytest.mark.parametrize("argv, needle", [
    (["ab", "--rounds", "100000000000000000000"], "expected a number from 1 to 1000"),
    (["ab", "--rounds", "auto", "--max-rounds", "5000"], "expected a number from 1 to 1000"),
    # numbers past any real setting: a sleep the platform cannot represent, a fork bomb
    (["ab", "--telemetry-interval", "1e308"], "expected at most 3600 seconds, got 1e+308"),
    (["screen", "--per-device", "1000000"], "expected at most 64 cells per device, got 1000000"),
    (["screen", "--timeout", "1e12"], "expected at most 604800 seconds (a week), got 1e+12"),
    (["ab", "--lock-timeout", "1e308"], "expected at most 604800 seconds (a week), got 1e+308"),
    (["screen", "--replay-ms", "1e9"], "expected at most 60000 ms, got 1e+09"),
    (["screen", "--direct-repeat", "99999999"], "expected at most 10000 calls, got 99999999"),
])
def test_a_number_past_any_campaign_is_refused_before_anything_runs(installed, tmp_path,
                                                                    capsys, argv, needle):
    assert zl(*argv, "--runs-root", str(tmp_path / "runs")) == 2
    assert needle in one_line(capsys)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("content, needle", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "is not UTF-8 text (byte 0)"),
    (b"abs " + b"x" * (1 << 20), "is over 1 MiB"),
])
def test_a_dismiss_file_that_is_no_list_gets_one_line(installed, tmp_path, capsys, content, needle):
    dismiss = tmp_path / "dismiss.txt"
    dismiss.write_bytes(content)
    assert zl_screen(tmp_path / "runs", "--ops", "add", "--dismiss", str(dismiss)) == 2
    line = one_line(capsys)
    assert needle in line and str(dismiss) in line


def test_a_disabled_backend_is_not_called_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ZL_DISABLE_PLUGINS", "cuda")
    monkeypatch.delenv("ZL_RUNS_ROOT", raising=False)
    monkeypatch.setattr(host_module, "_HOST", PluginHost.load())
    assert zl_screen(tmp_path / "runs") == 2
    line = one_line(capsys)
    assert "backend 'cuda' is installed (zl-backend-cuda) but disabled by ZL_DISABLE_PLUGINS" in line
    assert "Install" not in line
