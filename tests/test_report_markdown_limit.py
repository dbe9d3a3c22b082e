"""Markdown fits a GitHub comment (65,536 characters) at 1,000 operators: the overview and
the failures whole, operators' sections while they fit, every one left out named."""

from __future__ import annotations

import re

import pytest
from synthetic_report import rounds_model, screen_model

zl_report = pytest.importorskip("zl_report")
from zl_report.fit import GITHUB_COMMENT_LIMIT


def _sections(md: str) -> list[str]:
    return re.findall(r"^## (op\d{4}): ", md, flags=re.MULTILINE)


@pytest.mark.parametrize("build", [rounds_model, screen_model])
def test_a_thousand_operators_fit_a_comment_and_name_what_was_left_out(build):
    model = build(1000)
    md = zl_report.render(model, "md")
    assert len(md) <= GITHUB_COMMENT_LIMIT
    whole = zl_report.render(model, "md", limit=10**9)
    assert len(whole) > GITHUB_COMMENT_LIMIT  # the case is real: uncut, it would not fit
    shown = _sections(md)
    order = _sections(whole)
    assert shown and shown == sorted(shown, key=order.index)  # kept where the document has them
    if model["kind"] == "rounds":  # regressions go in first
        verdicts = dict(re.findall(r"^## (op\d{4}): (\w+)", whole, flags=re.MULTILINE))
        slower = [op for op in order if verdicts[op] == "SLOWER"]
        assert len(slower) > len(shown) and shown == slower[: len(shown)]
    left = re.search(r"(\d+) operator section\(s\) left out", md)
    assert left and int(left.group(1)) + len(shown) == len(_sections(whole))
    assert f"zl report {model['summary']['campaign']} --format html" in md
    # The overview's table is cut, not dropped, and says by how much.
    assert re.search(r"\.\.\. and \d+ more row\(s\), left out to fit a comment", md)
    if model["kind"] == "rounds":  # failures are never the part that is left out
        assert "op_broken: r02/B failed (rc=1)" in md


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
