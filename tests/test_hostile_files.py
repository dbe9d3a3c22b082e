"""Files zl reads back, damaged every way we could think of, never crash it: each of
campaign.json, status.tsv, screen.json, run_identity.json, results.json and the TTGIR
index of a real campaign is truncated, replaced by binary bytes, emptied, made valid JSON
of the wrong type, and (for JSON objects) given each field of the wrong type; `zl report`
(text and --json) must end with an exit code docs/report-json.md documents, never a traceback."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from zl_core.cli import main

#: Exit codes `zl report` may give (docs/report-json.md, docs/exit-codes.md): ok, usage/bad input,
#: caliber, verdict, incomplete.
DOCUMENTED = {0, 2, 4, 5, 6}
FILES = {
    "ab": ["campaign.json", "status.tsv", "gemm/r01/A/run_identity.json", "gemm/r01/A/results.json",
           "gemm/r02/B/results.json"],
    "screen": ["campaign.json", "status.tsv", "screen.json", "gemm/A/run_identity.json",
               "gemm/B/results.json", "gemm/A/ttgir/index.tsv"],
}



def test_the_codes_accepted_are_the_ones_the_report_documents():
    """DOCUMENTED is docs/report-json.md's table of `zl report`'s exit codes, no more."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "report-json.md").read_text(encoding="utf-8")
    table = text.split("## Exit codes of `zl report`", 1)[1].split("|---|---|\n", 1)[1].split("\n\n", 1)[0]
    assert {int(row.split("|")[1]) for row in table.splitlines()} == DOCUMENTED

def damaged(path: Path):
    raw = path.read_bytes()
    yield "truncated", raw[: len(raw) // 2]
    yield "binary", b"\x00\xff\xfe\x89PNG\r\n" * 10
    yield "empty", b""
    if path.suffix != ".json":
        yield "one column", b"op\n" + b"gemm\n" * 3
        return
    for value in ([], "x", 3, None):
        yield f"a {type(value).__name__}", json.dumps(value).encode()
    data = json.loads(raw)
    if isinstance(data, dict):
        for key in data:
            for value in ([1], "x", -1, None, {"a": 1}):
                changed = copy.deepcopy(data)
                changed[key] = value
                yield f"{key}={json.dumps(value)}", json.dumps(changed).encode()


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(FILES))
def test_no_damaged_file_crashes_the_report(fake_host, tmp_path, capsys, kind):
    root = tmp_path / "runs"
    if kind == "ab":
        argv = ["ab", "--rounds", "4", "--suite", "fake", "--ops", "gemm", "--allow-no-ir-diff",
                "--telemetry-interval", "0"]
    else:
        argv = ["screen", "--suite", "fake", "--ops", "gemm", "pointwise"]
    assert main([*argv, "--runs-root", str(root)]) == 0
    (base,) = root.glob(f"{kind}_*")
    cases, crashes, codes = 0, [], set()
    for rel in FILES[kind]:
        for label, content in damaged(base / rel):
            # A fresh copy per damage, never emptied and refilled: removing a campaign's
            # folders costs more than copying them, and each copy is left to tmp_path.
            work = tmp_path / "work" / f"{cases}"
            shutil.copytree(base, work)
            (work / rel).write_bytes(content)
            for extra in ([], ["--json"]):
                cases += 1
                try:
                    code = main(["report", str(work), *extra])
                except SystemExit as exc:
                    code = exc.code
                except BaseException as exc:  # noqa: BLE001 - what this test looks for
                    crashes.append(f"{rel} {label}: {type(exc).__name__}: {exc}"[:200])
                    continue
                _, err = capsys.readouterr()
                codes.add(code)
                if code not in DOCUMENTED or "Traceback" in err:
                    crashes.append(f"{rel} {label}: exit {code}")
    print(f"{kind}: {cases} damaged reads, {len(crashes)} crashed; exit codes {sorted(codes)}")
    assert crashes == []
    assert cases > 100 and 2 in codes  # most damage is refused as bad input


def test_a_status_row_cut_by_a_kill_is_dropped_before_the_next_is_appended(tmp_path):
    from zl_core.cells.cell import CellOutcome
    from zl_core.decisions.status import append_status, read_status

    def outcome(cell: Path) -> CellOutcome:
        cell.mkdir(parents=True, exist_ok=True)
        return CellOutcome(cell_dir=cell, rc=0, timed_out=False, elapsed_s=1.0, start=1.0, end=2.0,
                           markers={}, success_rows=1, failed_rows=0)

    append_status(tmp_path, round_no=0, op="abs", side="A", switch_value="0", outcome=outcome(tmp_path / "abs" / "A"))
    status = tmp_path / "status.tsv"
    status.write_text(status.read_text() + "0\tabs\tB\t1\t0\t1.")  # a row cut mid-line by SIGKILL
    append_status(tmp_path, round_no=0, op="mul", side="A", switch_value="0", outcome=outcome(tmp_path / "mul" / "A"))
    assert [(r.op, r.side, r.cell) for r in read_status(tmp_path)] == [("abs", "A", "abs/A"),
                                                                               ("mul", "A", "mul/A")]
    status.write_text("finished\tro")  # even the header cut: it is written again
    append_status(tmp_path, round_no=0, op="sub", side="A", switch_value="0", outcome=outcome(tmp_path / "sub" / "A"))
    assert [r.cell for r in read_status(tmp_path)] == ["sub/A"]
