"""Reading a cell's measurement rows: results.json first, FlagGems' printed table as fallback."""

from __future__ import annotations

import json

import pytest
from zl_core import hookimpl
from zl_core.foundation.errors import BadInputError
from zl_core.interface.rows import read_results
from zl_core.plugins.cell_rows import read_cell, read_rows
from zl_flaggems.host.table import parse_table

# Verbatim from a real FlagGems run on the lent H200 (facts/device-h200.md).
REAL_SOFTMAX = """\
Operator: softmax  Performance Test (dtype=torch.float16, mode=kernel,level=core)
Status       Torch Latency (ms)    Gems Latency (ms)         Gems Speedup          Size Detail
-----------------------------------------------------------------------------------------------
SUCCESS               0.238448            0.235136               1.014          [torch.Size([1048576])]
SUCCESS               0.004672            0.036960               0.126          [torch.Size([64, 64]), 1]
"""


def title(op: str, dtype: str = "torch.float16") -> str:
    # BenchmarkResult.__str__: two spaces before "Performance", none before "level=".
    return f"\nOperator: {op}  Performance Test (dtype={dtype}, mode=kernel,level=core)\n"


def header(tflops: bool = False, gbps: bool = False) -> str:
    cols = [f"{'Status':<10}", f"{'Torch Latency (ms)':>20}", f"{'Gems Latency (ms)':>20}",
            f"{'Gems Speedup':>20}"]
    if tflops:
        cols.append(f"{'TFLOPS':>20}")
    if gbps:
        cols += [f"{'Torch GBPS ':>20}", f"{'Gems GBPS ':>20}"]
    cols.append(f"{'Size Detail':>20}\n")
    line = " ".join(cols)
    return line + "-" * len(line) + "\n"


def data(status: str, *values: float | None, size: str) -> str:
    def fmt(v, spec):
        return "N/A" if v is None else format(v, spec)

    torch_ms, gems_ms, speedup, *extra = values
    text = f"{status:<10}" + f"{fmt(torch_ms, '.6f'):>20}" + f"{fmt(gems_ms, '.6f'):>20}"
    text += f"{fmt(speedup, '.3f'):>20}"
    text += "".join(f"{fmt(v, '.3f'):>20}" for v in extra)
    return text + " " * 10 + size + "\n"


def test_real_h200_table_parses_with_exact_values():
    rows = parse_table(REAL_SOFTMAX)
    assert [(r.op, r.dtype, r.size_detail) for r in rows] == [
        ("softmax", "float16", "[torch.Size([1048576])]"),
        ("softmax", "float16", "[torch.Size([64, 64]), 1]"),
    ]
    assert rows[0].provider_value("torch_latency_ms") == pytest.approx(0.238448)
    assert rows[0].gems_latency_ms == pytest.approx(0.235136)
    assert rows[1].provider_value("speedup") == pytest.approx(0.126)
    assert all(r.status == "SUCCESS" and r.source == "run.log" and r.timer is None for r in rows)


def test_spec_built_table_matches_the_real_sample_layout():
    built = (title("softmax").lstrip("\n") + header()
             + data("SUCCESS", 0.238448, 0.235136, 1.014, size="[torch.Size([1048576])]")
             + data("SUCCESS", 0.004672, 0.036960, 0.126, size="[torch.Size([64, 64]), 1]"))
    assert built == REAL_SOFTMAX  # the format spec reproduces the real output byte for byte


def test_tflops_and_gbps_columns_are_counted_from_the_header():
    text = (title("mm") + header(tflops=True, gbps=True)
            + data("SUCCESS", 0.5, 0.25, 2.0, 123.456, 800.0, 1600.0,
                   size="[torch.Size([4096, 4096]), torch.Size([4096, 4096])]"))
    (row,) = parse_table(text)
    assert row.gems_latency_ms == 0.25  # the neutral latency; FlagGems' own numbers kept apart:
    assert dict(row.extra) == {"torch_latency_ms": 0.5, "speedup": 2.0, "TFLOPS": pytest.approx(123.456),
                               "Torch GBPS": 800.0, "Gems GBPS": 1600.0}
    assert row.size_detail == "[torch.Size([4096, 4096]), torch.Size([4096, 4096])]"


def test_gbps_without_tflops():
    text = title("add") + header(gbps=True) + data("SUCCESS", 0.1, 0.2, 0.5, 10.0, 5.0,
                                                   size="[torch.Size([64])]")
    (row,) = parse_table(text)
    assert row.gems_latency_ms == 0.2 and dict(row.extra) == {"torch_latency_ms": 0.1, "speedup": 0.5,
                                                "Torch GBPS": 10.0, "Gems GBPS": 5.0}


def test_na_values_and_failed_rows():
    text = (title("sort") + header()
            + data("SUCCESS", 0.1, None, None, size="[torch.Size([8])]")
            + data("FAILED", None, None, None, size="[torch.Size([16])]"))
    ok, failed = parse_table(text)
    assert ok.status == "SUCCESS" and ok.provider_value("torch_latency_ms") == 0.1 and ok.gems_latency_ms is None
    assert failed.status == "FAILED" and failed.size_detail == "[torch.Size([16])]"
    assert failed.provider_value("torch_latency_ms") is None


def test_ansi_colour_and_the_red_input_failure_line():
    text = ("\x1b[31mFAILED\x1b[0m: Operator=topk dtype=torch.bfloat16 err=<<<RuntimeError: bad\n"
            "second line of the message>>>\n"
            + title("topk", "torch.bfloat16") + header()
            + "\x1b[32m" + data("SUCCESS", 1.0, 0.5, 2.0, size="[torch.Size([2, 3])]").rstrip("\n")
            + "\x1b[0m\n")
    failed, ok = parse_table(text)
    assert failed.status == "FAILED" and failed.op == "topk" and failed.dtype == "bfloat16"
    assert "RuntimeError: bad" in failed.error and "second line" in failed.error
    assert ok.size_detail == "[torch.Size([2, 3])]" and ok.gems_latency_ms == 0.5


def test_head_flaggems_literal_dtype_placeholder_takes_the_tables_dtype():
    text = (title("mm", "torch.float32") + header()
            + "FAILED: Operator=mm dtype={dtype} err=<<<ValueError: x>>>\n")
    (row,) = parse_table(text)
    assert row.dtype == "float32" and row.error == "ValueError: x"


def test_truncated_log_drops_the_half_last_line():
    full = title("gelu") + header() + data("SUCCESS", 1.0, 1.0, 1.0, size="[torch.Size([1024])]")
    cut = full + data("SUCCESS", 2.0, 2.0, 1.0, size="[torch.Size([4096, 4096])]")[:-12]
    rows = parse_table(cut)
    assert [r.size_detail for r in rows] == ["[torch.Size([1024])]"]
    # cut inside the numbers, too
    assert len(parse_table(full + "SUCCESS               0.2384")) == 1
    # a reformatted size detail without brackets looks complete when cut: only the
    # missing newline tells
    cut_plain = full + data("SUCCESS", 2.0, 2.0, 1.0, size="4096x4096")[:-4]
    assert [r.size_detail for r in parse_table(cut_plain)] == ["[torch.Size([1024])]"]


def test_one_table_per_dtype_and_pytest_noise_between():
    text = ("benchmark/test_softmax.py::test_softmax " + title("softmax")
            + header() + data("SUCCESS", 1.0, 1.0, 1.0, size="[torch.Size([8])]")
            + "PASSED\n" + title("softmax", "torch.bfloat16") + header()
            + data("SUCCESS", 2.0, 1.0, 2.0, size="[torch.Size([8])]"))
    rows = parse_table(text)
    assert [(r.dtype, r.gems_latency_ms) for r in rows] == [("float16", 1.0), ("bfloat16", 1.0)]


def _results(path, rows, markers=None):
    path.write_text(json.dumps({"schema": 1, "op": "softmax", "rows": rows,
                                "markers": markers or {}}))


def _row(size, gems, **kw):
    base = {"op": "softmax", "dtype": "float16", "size_detail": size, "torch_latency_ms": 1.0,
            "gems_latency_ms": gems, "speedup": 1.0 / gems, "status": "SUCCESS",
            "timer": "graph", "fallback": False, "error": None}
    base.update(kw)
    return base


def test_results_json_is_preferred_and_agrees_with_the_table(tmp_path):
    (tmp_path / "run.log").write_text(REAL_SOFTMAX)
    _results(tmp_path / "results.json",
             [_row("[torch.Size([1048576])]", 0.235136, timer="direct", fallback=True),
              _row("[torch.Size([64, 64]), 1]", 0.036960)])
    cell = read_cell(tmp_path)
    assert cell.source == "results.json"
    assert [(r.timer, r.fallback) for r in cell.rows] == [("direct", True), ("graph", False)]
    table = parse_table(REAL_SOFTMAX)
    assert [(r.size_detail, r.gems_latency_ms) for r in cell.rows] == \
        [(r.size_detail, r.gems_latency_ms) for r in table]


def test_corrupt_results_json_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "results.json").write_text('{"rows": [')
    with pytest.raises(BadInputError) as err:
        read_rows(tmp_path)
    msg = str(err.value)
    assert str(tmp_path / "results.json") in msg and "\n" not in msg


@pytest.mark.parametrize(("timer", "log_extra", "expected"), [
    ("direct", "", "direct"),
    ("graph", "", "graph"),
    ("graph", "BENCHMARK_DIRECT_NO_CUDAGRAPH op=softmax phase=capture error=x\n", None),
])
def test_log_rows_take_the_timer_only_when_unambiguous(tmp_path, timer, log_extra, expected):
    (tmp_path / "run_identity.json").write_text(json.dumps({"timer": timer}))
    (tmp_path / "run.log").write_text(log_extra + REAL_SOFTMAX)
    cell = read_cell(tmp_path)
    assert cell.source == "run.log"
    assert {r.timer for r in cell.rows} == {expected}
    if expected is None:
        assert any("unknown" in n for n in cell.notes)


def test_empty_cell_has_no_rows_and_says_why(tmp_path):
    cell = read_cell(tmp_path)
    assert cell.rows == () and cell.source is None and cell.notes


def test_the_provider_the_identity_names_reads_a_cell_without_results_json(tmp_path, fake_host):
    (tmp_path / "run.log").write_text(REAL_SOFTMAX)
    (tmp_path / "run_identity.json").write_text(json.dumps({"timer": "graph", "provider": "fake"}))
    # the fake provider prints no table: only results.json would give it rows
    assert read_cell(tmp_path, fake_host).source is None
    (tmp_path / "run_identity.json").write_text(json.dumps({"timer": "graph"}))
    from zl_flaggems.host.provider import FlagGemsProvider

    fake_host.register(type("P", (), {"zl_providers": hookimpl(lambda self: [FlagGemsProvider()])})(),
                       name="fg")
    cell = read_cell(tmp_path, fake_host)  # no provider named: the one that finds rows answers
    assert cell.source == "run.log" and len(cell.rows) == 2


def test_results_json_keeps_the_providers_own_numbers_apart(tmp_path):
    # results.json is unchanged; what the core does not read itself is the provider's, by name
    _results(tmp_path / "results.json", [_row("[torch.Size([8])]", 0.5, TFLOPS=12.0, note="text")])
    (row,) = read_results(tmp_path).rows
    assert row.gems_latency_ms == 0.5 and row.timer == "graph"
    assert dict(row.extra) == {"torch_latency_ms": 1.0, "speedup": 2.0, "TFLOPS": 12.0}
    assert row.provider_value("speedup") == 2.0 and row.provider_value("GBPS") is None


def test_the_latency_is_read_under_its_neutral_name_and_its_earlier_one(tmp_path):
    """results.json's latency is ``latency_ms``; ``gems_latency_ms``, its earlier name (the
    kept campaigns of docs/validation/data, zl-flaggems' cells), reads the same, and
    neither lands among the provider's own numbers."""
    new, old = _row("[torch.Size([8])]", 0.5), _row("[torch.Size([8])]", 0.5)
    new["latency_ms"] = new.pop("gems_latency_ms")
    for rows in ([new], [old]):
        _results(tmp_path / "results.json", rows)
        (row,) = read_results(tmp_path).rows
        assert row.latency_ms == 0.5 and row.gems_latency_ms == 0.5
        assert dict(row.extra) == {"torch_latency_ms": 1.0, "speedup": 2.0}
    _results(tmp_path / "results.json", [{**new, "gems_latency_ms": 9.0}])
    assert read_results(tmp_path).rows[0].latency_ms == 0.5  # the neutral name wins


def test_a_row_built_with_the_earlier_latency_name_keeps_working():
    import attrs
    from zl_core.interface.rows import Row

    fields = {"op": "mm", "dtype": "float16", "size_detail": "[8]", "status": "SUCCESS",
              "timer": "graph", "fallback": False, "source": "results.json"}
    row = Row(gems_latency_ms=0.25, **fields)
    assert row == Row(latency_ms=0.25, **fields) and row.gems_latency_ms == 0.25
    assert attrs.evolve(row, latency_ms=0.5).latency_ms == 0.5
    assert attrs.evolve(row, gems_latency_ms=0.75).latency_ms == 0.75
    data = row.to_json()
    assert data["latency_ms"] == 0.25 and "gems_latency_ms" not in data
    with pytest.raises(TypeError):
        Row(latency_ms=0.25, no_such_field=1, **fields)


def test_a_backend_built_with_the_earlier_vendor_name_keeps_working():
    import attrs
    from zl_core import Backend

    backend = Backend(name="acc", flaggems_vendor="accvendor", graph_capture=True)
    assert backend == Backend(name="acc", vendor="accvendor", graph_capture=True)
    assert backend.flaggems_vendor == backend.vendor == "accvendor"
    assert attrs.evolve(backend, vendor="other").flaggems_vendor == "other"
    assert backend.capabilities["vendor"] == "accvendor"
    with pytest.raises(ValueError, match="plain word"):
        Backend(name="not a word", flaggems_vendor="x")
