"""``zl ops``: a suite's operators with their files and dtypes, as text and JSON."""

from __future__ import annotations

import json

import pytest
import zl_core.plugins.host as host_module
import zl_flaggems.host.hooks as flaggems_hooks
from zl_core import PluginHost
from zl_core.cli import main


@pytest.fixture
def host(monkeypatch):
    monkeypatch.delenv("FLAGGEMS_DIR", raising=False)
    host = PluginHost()
    host.register(flaggems_hooks, name="flaggems", package="zl-flaggems", version="test")
    monkeypatch.setattr(host_module, "_HOST", host)
    return host


def test_text_lists_the_builtin_suite_by_default(host, capsys):
    assert main(["ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "suite builtin: 7 operator(s) (packaged with the provider)"
    assert lines[1].split() == ["op", "op_file", "dtypes", "kinds"]
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert sorted(rows) == ["add", "gelu", "layer_norm", "mm", "mm_f32", "softmax", "sum"]
    assert rows["mm"] == ["mm", "mm", "float16,bfloat16", "gemm,tensor-core,autotuned"]
    assert rows["mm_f32"][2] == "float32"
    # Columns line up: every row starts its dtypes where the header does.
    start = lines[1].index("dtypes")
    assert all(line[start - 2:start] == "  " and line[start] != " " for line in lines[2:])


def test_json_is_a_list_of_op_records(host, capsys):
    assert main(["ops", "--suite", "builtin", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [entry["op"] for entry in listing] == ["add", "gelu", "layer_norm", "mm", "mm_f32",
                                                   "softmax", "sum"]
    mm = listing[3]
    assert mm == {"op": "mm", "op_file": "mm", "dtypes": ["float16", "bfloat16"],
                  "kinds": ["gemm", "tensor-core", "autotuned"], "function": "mm",
                  "source": None}


def test_unknown_suite_is_a_one_line_usage_error(host, capsys):
    assert main(["ops", "--suite", "nosuch"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("zl ops: unknown suite 'nosuch'; known suites: builtin, flaggems")


def test_flaggems_suite_without_a_checkout_says_how_to_give_one(host, capsys):
    assert main(["ops", "--suite", "flaggems"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--source" in err[0]


@pytest.mark.parametrize("option", ["--source", "--flaggems-dir"])  # the second: its alias
def test_a_checkout_selects_the_suite_that_runs_from_it(host, capsys, tmp_path, option):
    (tmp_path / "benchmark").mkdir()
    (tmp_path / "src" / "flag_gems").mkdir(parents=True)  # zl ops checks the checkout
    (tmp_path / "benchmark" / "test_blas.py").write_text("def test_addmm():\n    pass\n")
    assert main(["ops", option, str(tmp_path), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [(e["op"], e["op_file"]) for e in listing] == [("addmm", "blas")]
    assert main(["ops", option, str(tmp_path)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == f"suite flaggems: 1 operator(s) ({tmp_path.resolve()})"
    assert text[2].split() == ["addmm", "blas", "-", "-"]
