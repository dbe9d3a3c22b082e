"""Markdown fits a GitHub comment (65,536 characters) at 1,000 operators: the overview and
the failures whole, operators' sections while they fit, every one left out named."""

from __future__ import annotations

import re

import pytest
from synthetic_report import rounds_model, screen_model

zl_report = pytest.importorskip("zl_report")
from zl_report.answer import ordered_operators
from zl_report.fit import GITHUB_COMMENT_LIMIT
from zl_report.format import pct, span


def _sections(md: str) -> list[str]:
    return re.findall(r"^## (op\d{4}): ", md, flags=re.MULTILINE)


def _answer_rows(md: str) -> dict[str, str]:
    """The answer's table rows by operator (the first table of the comment)."""
    rows = {}
    for line in md.split("\n## ", 2)[1].splitlines():
        if re.match(r"^\| op\d{4} \|", line):
            rows[line.split(" | ")[0].strip("| ")] = line
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("build", [rounds_model, screen_model])
def test_a_thousand_operators_fit_a_comment_and_name_what_was_left_out(build):
    model = build(1000)
    md = zl_report.render(model, "md")
    assert len(md) <= GITHUB_COMMENT_LIMIT
    whole = zl_report.render(model, "md", limit=10**9)
    assert len(whole) > GITHUB_COMMENT_LIMIT  # the case is real: uncut, it would not fit
    assert md.startswith(f"# {model['title']}\n\n## Verdicts\n")  # the answer leads
    shown = _sections(md)
    order = _sections(whole)
    assert shown == sorted(shown, key=order.index)  # kept where the document has them
    left = re.search(r"(\d+) operator section\(s\) left out", md)
    assert left and int(left.group(1)) + len(shown) == len(_sections(whole))
    assert "IR diff(s) left out" in md and "```diff" not in md  # the diffs go first
    assert f"zl report {model['summary']['campaign']} --format html" in md
    if model["kind"] == "rounds":
        verdicts = dict(re.findall(r"^## (op\d{4}): (\w+)", whole, flags=re.MULTILINE))
        slower = [op for op in order if verdicts[op] == "SLOWER"]
        assert shown and len(slower) > len(shown) and shown == slower[: len(shown)]  # regressions first
        assert "op_broken: r02/B failed (rc=1)" in md  # failures are never the part left out
    # Every operator is named, by verdict: in a row of the answer or in a line of its verdict.
    rows = _answer_rows(md)
    ops = model["summary"]["operators"] if model["kind"] == "rounds" else model["rows"]
    for op in ops:
        named = re.search(rf"{op['verdict']} \(\d+\): [^\n]*\b{op['op']}(?=[,_ .]|$)", md,
                          re.MULTILINE)
        assert op["op"] in rows or named, op["op"]


@pytest.mark.slow
def test_at_a_thousand_operators_every_called_operator_has_its_estimate_and_interval():
    """Done when: a 1,000-operator campaign's comment names every SLOWER and FASTER
    operator with the estimate and interval its verdict was decided on."""
    model = rounds_model(1000)
    md = zl_report.render(model, "md")
    assert len(md) <= GITHUB_COMMENT_LIMIT
    rows = _answer_rows(md)
    called = [o for o in model["summary"]["operators"] if o["verdict"] in ("SLOWER", "FASTER")]
    assert len(called) >= 380
    for op in called:
        est = op["estimate"]
        row = rows[op["op"]]
        assert f"| {op['verdict']} | {pct(est['estimate_pct'])} | " in row, row
        assert span(est["ci_low_pct"], est["ci_high_pct"]) in row, row
    slower = [o for o in called if o["verdict"] == "SLOWER"]
    first = list(rows)[: len(slower)]  # worst regression first
    assert first == [o["op"] for o in sorted(slower, key=lambda o: o["estimate"]["estimate_pct"])]


def test_an_answer_over_the_limit_keeps_its_worst_rows_and_names_the_rest_by_verdict():
    model = rounds_model(200)
    md = zl_report.render(model, "md", limit=12_000)
    assert len(md) <= 12_000
    rows = _answer_rows(md)
    ordered = [o for o in ordered_operators(model["summary"]["operators"]) if o["verdict"] in
               ("SLOWER", "MIXED", "FASTER")]
    assert rows and list(rows) == [o["op"] for o in ordered[: len(rows)]]
    for op in ordered[len(rows):]:
        assert re.search(rf"no row here, to fit a comment: {op['verdict']} \(\d+\): [^\n]*"
                         rf"\b{op['op']}(?=[,_ .]|$)", md, re.MULTILINE), op["op"]


def test_markdown_folds_per_shape_tables_and_says_constant_columns_once():
    model = rounds_model(3)
    md = zl_report.render(model, "md")
    changed = [o for o in model["summary"]["operators"] if o["verdict"] != "NO_CHANGE"]
    assert len(changed) == 2 and md.count("<details><summary>5 shape(s)") == 2
    assert "_every row: segment: main; timer: graph_" in md
    assert "| shape | verdict | estimate | CI | A | B | B vs A |" in md


@pytest.mark.slow
def test_a_link_to_the_published_html_replaces_the_command():
    md = zl_report.render(rounds_model(1000), "md", link="https://ci.example/report.html")
    assert "the whole report: https://ci.example/report.html" in md


def test_a_report_that_fits_is_not_touched():
    model = rounds_model(5)
    assert zl_report.render(model, "md") == zl_report.render(model, "md", limit=10**9)
    assert "left out" not in zl_report.render(model, "md")
    assert "the whole report" not in zl_report.render(model, "md")  # no link given, nothing cut


def test_zl_report_links_the_published_html_from_the_markdown(tmp_path):
    import subprocess
    import sys
    import tarfile
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "docs/validation/data/2026-12-05-two-sources"
    with tarfile.open(data / "campaign.tgz") as tar:
        tar.extractall(tmp_path, filter="data")
    campaign = next(tmp_path.glob("screen_*"))
    proc = subprocess.run([sys.executable, "-m", "zl_core", "report", str(campaign), "--format",
                           "md", "--link", "https://ci.example/r.html"], capture_output=True,
                          text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("the whole report: https://ci.example/r.html")
    assert "left out" not in proc.stdout  # five operators fit whole
