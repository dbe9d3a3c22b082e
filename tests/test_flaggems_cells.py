"""Real pytest cells on a fake FlagGems checkout (tests/fake_flaggems.py), with zl's
plugins loaded by -p as the provider loads them. No torch, no device: a fake Triton
driver whose clock makes a direct launch cost more than a replayed one."""

from __future__ import annotations

import json
import random
import re

import fake_flaggems
import pytest
from fake_flaggems import FLUSH_COST, LAUNCH_OVERHEAD

pytest.importorskip("triton")

FILE = "benchmark/test_fake.py"


@pytest.fixture(scope="module")
def fg(tmp_path_factory):
    return fake_flaggems.build(tmp_path_factory.mktemp("fg") / "FlagGems")


def run(fg, tmp_path, node, **kw):
    cell = tmp_path / "cell"
    proc = fake_flaggems.run_cell(fg, cell, node, **kw)
    doc = json.loads((cell / "results.json").read_text())
    identity = json.loads((cell / "run_identity.json").read_text()) if (cell / "run_identity.json").exists() else {}
    return proc, doc, identity, cell


def printed_rows(stdout: str) -> list[dict]:
    """The data rows of FlagGems' printed tables (fixed-width columns)."""
    rows, op, dtype = [], None, None
    for line in stdout.splitlines():
        m = re.match(r"Operator: (\S+)  Performance Test \(dtype=(\S+), mode=", line)
        if m:
            op, dtype = m.group(1), m.group(2)
            continue
        if line.startswith(("SUCCESS", "FAILED")) and op:
            rows.append({"op": op, "dtype": dtype, "status": line[:10].strip(), "torch": line[10:30].strip(),
                         "gems": line[30:50].strip(), "speedup": line[50:70].strip(), "detail": line[80:]})
    return rows


def marker_lines(stdout: str, name: str) -> list[str]:
    return [ln for ln in stdout.splitlines() if ln.startswith(name)]


def test_graph_rows_match_the_printed_table(fg, tmp_path):
    proc, doc, identity, cell = run(fg, tmp_path, f"{FILE}::test_fakeadd")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = printed_rows(proc.stdout)
    assert len(table) == 4 and len(doc["rows"]) == 4
    for printed, row in zip(table, doc["rows"], strict=True):
        assert row["op"] == printed["op"] == "fakeadd"
        assert "torch." + row["dtype"] == printed["dtype"]
        assert row["size_detail"] == printed["detail"]
        assert f"{row['torch_latency_ms']:.6f}" == printed["torch"]
        assert f"{row['latency_ms']:.6f}" == printed["gems"]
        assert f"{row['speedup']:.3f}" == printed["speedup"]
        assert row["status"] == printed["status"] == "SUCCESS"
        assert (row["timer"], row["fallback"], row["timers"]) == ("graph", False, ["graph", "graph"])
    # graph replay measured the kernel alone: 64x64 costs 0.01 ms, no launch overhead
    assert doc["rows"][0]["latency_ms"] == pytest.approx(0.01)
    assert doc["rows"][0]["shape_label"] == "float16_64x64_64x64_alpha_1"
    assert doc["complete"] is True and doc["exitstatus"] == 0
    assert doc["markers"] == {"AUTOTUNE_REPLAY_FALLBACK": 0, "BENCHMARK_DIRECT_NO_CUDAGRAPH": 0,
                              "BENCHMARK_CAPTURE_POISONED": 0, "FOREIGN_VENDOR_MODULE": 0,
                              "PARALLEL_COMPILE_FALLBACK": 0}
    # vendor plugin set GEMS_VENDOR from the backend before flag_gems was imported
    assert identity["flaggems_vendor"] == "fakevendor"
    assert identity["flag_gems_version"] == "0.0.fake"
    assert identity["timer"] == "graph" and identity["triton_version"]
    assert identity["shape_mode"] == "upstream"
    shapes = (cell / "shapes.yaml").read_text()
    assert "fakeadd:" in shapes and "source: upstream" in shapes


@pytest.mark.parametrize("l2", ["warm", "flush", None])
def test_the_l2_mode_reaches_the_graph_timer_and_the_identity(fg, tmp_path, l2):
    extra = {} if l2 is None else {"ZL_L2": l2}
    proc, doc, identity, _ = run(fg, tmp_path, f"{FILE}::test_fakeadd", extra_env=extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    mode = l2 or "warm"  # a cell given none keeps the graph timer's warm cache
    assert identity["l2"] == mode and f"replay_ms=30 l2={mode}" in proc.stdout
    row = doc["rows"][0]
    assert row["timer"] == "graph" and not row["fallback"]
    # A flush is captured before every call and subtracted: the kernel's 0.01 ms either way
    # (the fake card has no cache for it to change).
    assert row["latency_ms"] == pytest.approx(0.01)
    assert row["flush_ms"] == (pytest.approx(FLUSH_COST) if mode == "flush" else None)


def test_a_direct_timed_cell_records_the_flush_do_bench_makes(fg, tmp_path):
    proc, doc, identity, _ = run(fg, tmp_path, f"{FILE}::test_fakeadd",
                                 extra_env={"ZL_TIMER": "direct", "ZL_L2": "warm"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert identity["timer"] == "direct" and identity["l2"] == "flush"
    assert "ZL_L2=warm does not apply to timer=direct" in proc.stdout
    assert doc["rows"][0]["flush_ms"] is None


def test_users_gems_vendor_is_kept_and_a_mismatch_noted(fg, tmp_path):
    proc, _, identity, _ = run(fg, tmp_path, f"{FILE}::test_seedcheck", extra_env={"GEMS_VENDOR": "other"})
    assert identity["flaggems_vendor"] == "other"
    assert "expects 'fakevendor'" in proc.stdout


def test_recoverable_capture_falls_back_per_call(fg, tmp_path):
    proc, doc, _, _ = run(fg, tmp_path, f"{FILE}::test_fakerng")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = marker_lines(proc.stdout, "BENCHMARK_DIRECT_NO_CUDAGRAPH")
    assert lines == [("BENCHMARK_DIRECT_NO_CUDAGRAPH op=fakerng phase=capture "
                      "error=RuntimeError: operation not permitted when stream is capturing")]
    (row,) = doc["rows"]
    assert (row["timer"], row["fallback"], row["timers"]) == ("direct", True, ["direct", "graph"])
    assert row["torch_latency_ms"] == pytest.approx(0.00125 + LAUNCH_OVERHEAD)  # timed directly
    assert row["latency_ms"] == pytest.approx(0.000625)  # still captured
    assert doc["markers"]["BENCHMARK_DIRECT_NO_CUDAGRAPH"] == 1


def test_denied_op_is_never_captured(fg, tmp_path):
    proc, doc, _, _ = run(fg, tmp_path, f"{FILE}::test_fakedenied")
    assert proc.returncode == 0
    assert len(marker_lines(proc.stdout, "BENCHMARK_DIRECT_NO_CUDAGRAPH op=fakedenied phase=denylist")) == 2
    (row,) = doc["rows"]
    assert row["fallback"] and row["fallback_phases"] == ["denylist", "denylist"]
    assert row["latency_ms"] == pytest.approx(0.000625 + LAUNCH_OVERHEAD)


def test_fatal_capture_error_fails_the_test_without_rows(fg, tmp_path):
    proc, doc, _, _ = run(fg, tmp_path, f"{FILE}::test_fakefatal")
    assert proc.returncode == 1
    assert doc["rows"] == [] and doc["markers"]["BENCHMARK_DIRECT_NO_CUDAGRAPH"] == 0
    (test,) = doc["tests"]
    assert test["outcome"] == "failed" and "kernel exploded" in test["message"]


def test_poisoned_capture_stops_the_cell(fg, tmp_path):
    proc, doc, _, _ = run(fg, tmp_path, FILE, extra_args=("-k", "fakeadd or fakepoison or zafter"))
    assert proc.returncode == 2, proc.stdout
    assert marker_lines(proc.stdout, "BENCHMARK_CAPTURE_POISONED") == [
        "BENCHMARK_CAPTURE_POISONED op=fakepoison error=RuntimeError: device context lost"]
    assert [t["node"].rsplit("::", 1)[1] for t in doc["tests"]] == ["test_fakeadd", "test_fakepoison"]
    assert {r["op"] for r in doc["rows"]} == {"fakeadd"}  # rows measured before it are kept
    assert doc["markers"]["BENCHMARK_CAPTURE_POISONED"] == 1
    assert doc["complete"] is True and doc["exitstatus"] == 2


def test_direct_timer_repeat_and_foreign_vendor(fg, tmp_path):
    proc, doc, identity, _ = run(fg, tmp_path, f"{FILE}::test_fakeadd",
                                 extra_env={"ZL_TIMER": "direct", "ZL_DIRECT_REPEAT": "3", "FAKE_FOREIGN": "1"})
    assert proc.returncode == 0
    assert identity["timer"] == "direct" and identity["direct_repeat"] == 3
    assert all(r["timer"] == "direct" and not r["fallback"] and r["direct_repeat"] == 3 for r in doc["rows"])
    assert doc["rows"][0]["latency_ms"] == pytest.approx(0.01 + LAUNCH_OVERHEAD)
    # _fakevendorx shares a prefix with the active vendor and is still foreign
    assert marker_lines(proc.stdout, "FOREIGN_VENDOR_MODULE") == [
        "FOREIGN_VENDOR_MODULE active=fakevendor loaded=fakevendorx,nvidia"]
    assert doc["markers"]["FOREIGN_VENDOR_MODULE"] == 1


def test_shape_file_injection_along_the_class_chain(fg, tmp_path):
    spec = tmp_path / "shapes.yaml"
    spec.write_text("BlasBenchmark:\n  shapes: [[1, 8, 8, 8], [3, 32, 32, 32]]\n"
                    "fakeadd:\n  shapes: [[16, 16]]\n  shape_desc: X\n")
    proc, doc, identity, cell = run(fg, tmp_path, FILE, extra_env={"ZL_SHAPE_FILE": str(spec)},
                                    extra_args=("-k", "fakeadd or fakemm or fakerng", "--dtypes", "float16"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    details = {(r["op"], r["size_detail"]) for r in doc["rows"]}
    assert details == {
        ("fakeadd", "([torch.Size([16, 16]), torch.Size([16, 16])], {'alpha': 1})"),
        # the BlasBenchmark key reached a class defined inside the test function
        ("fakemm", "[torch.Size([1, 8, 8]), torch.Size([1, 8, 8])]"),
        ("fakemm", "[torch.Size([3, 32, 32]), torch.Size([3, 32, 32])]"),
        # no entry: the benchmark's own shapes (core_shapes.yaml's Benchmark key)
        ("fakerng", "[torch.Size([256])]"),
    }
    assert all(r["timer"] for r in doc["rows"])  # nested input iterators still counted once per row
    import yaml

    used = yaml.safe_load((cell / "shapes.yaml").read_text())
    assert used["fakemm"]["shapes"] == [[1, 8, 8, 8], [3, 32, 32, 32]]
    assert used["fakemm"]["source"] == f"file:{spec} key=BlasBenchmark"
    assert used["fakerng"]["source"].startswith("upstream (no entry")
    assert identity["shape_mode"] == f"file:{spec}"


def test_seed_is_fixed_per_test(fg, tmp_path):
    proc, _, identity, _ = run(fg, tmp_path, f"{FILE}::test_seedcheck", extra_env={"ZL_SEED": "7"})
    value = float(re.search(r"SEEDCHECK (\S+)", proc.stdout).group(1))
    assert value == random.Random(7).random()
    assert identity["seed"] == 7


def test_without_the_reference_the_rows_keep_the_operator_latency(fg, tmp_path):
    proc, doc, identity, _cell = run(fg, tmp_path, f"{FILE}::test_fakeadd", extra_args=("--metrics", "latency"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["rows"] and all(r["torch_latency_ms"] is None for r in doc["rows"])
    assert all(r["latency_ms"] > 0 for r in doc["rows"])
    seconds = identity["cell_phases"]["seconds"]
    assert seconds["reference_timing"] == 0 and seconds["operator_timing"] > 0


def test_a_generator_library_that_fails_to_import_is_named_not_skipped_silently(tmp_path, monkeypatch, capsys):
    from zl_flaggems.cell.plugins import seed

    (tmp_path / "zl_broken_rng.py").write_text("raise RuntimeError('no driver')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert seed._optional("zl_broken_rng") is None
    assert seed._optional("zl_not_installed_rng") is None
    assert capsys.readouterr().out == "[zl seed] cannot import zl_broken_rng: RuntimeError: no driver\n"
