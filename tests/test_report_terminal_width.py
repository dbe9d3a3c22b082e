"""The text report within the terminal's width, 80 columns included, with no number cut:
on the real H200 campaigns kept in docs/validation/data and on 1,000-operator models."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest
from synthetic_report import rounds_model, screen_model
from zl_core.report.dispatch import build

zl_report = pytest.importorskip("zl_report")

DATA = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data"
ARCHIVES = [*sorted(DATA.glob("2026-12-03-a[ab]-*.tgz")), DATA / "2026-12-05-two-sources" / "campaign.tgz"]
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?%?(?![\w.])")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _campaign(archive: Path, tmp_path: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    (meta,) = [p for p in tmp_path.rglob("campaign.json")
               if p.parent.name.startswith(("ab_", "aa_", "screen_"))]
    return meta.parent


def _models(tmp_path: Path):
    for archive in ARCHIVES:
        yield archive.parent.name if archive.name == "campaign.tgz" else archive.stem, build(
            _campaign(archive, tmp_path / archive.stem), allow_mismatch=True)
    yield "synthetic rounds", rounds_model(60)
    yield "synthetic screen", screen_model(60)
    from zl_core.report.compare import build_compare

    yield "zl compare", build_compare([rounds_model(30), rounds_model(40)], ["ab_1", "ab_2"])


@pytest.mark.parametrize("columns", [80, 100])
def test_every_line_fits_the_terminal_and_every_number_is_whole(tmp_path, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    for name, model in _models(tmp_path):
        narrow = zl_report.render(model, "text")
        coloured = ANSI.sub("", zl_report.render(model, "text", color=True))
        for text, form in ((narrow, "plain"), (coloured, "colour")):
            long = [line for line in text.splitlines() if len(line) > columns]
            assert not long, f"{name} ({form}): {len(long)} line(s) over {columns}: {long[0]!r}"
        monkeypatch.setenv("COLUMNS", "100000")
        wide = zl_report.render(model, "text")
        monkeypatch.setenv("COLUMNS", str(columns))
        # Every number the unbounded report prints is printed whole at this width too.
        missing = set(NUMBER.findall(wide)) - set(NUMBER.findall(narrow))
        assert not missing, f"{name}: numbers cut or lost at {columns} columns: {sorted(missing)[:5]}"
        assert "…" not in narrow and "…" not in coloured


def test_constant_columns_move_above_the_table_and_the_verdict_stays(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    model = build(_campaign(DATA / "2026-12-03-ab-bmm-addmm-30ms.tgz", tmp_path), allow_mismatch=True)
    text = zl_report.render(model, "text")
    assert "every row: segment: main; timer: graph" in text
    # bmm's five shapes are all SLOWER: the verdict is still in each row.
    assert sum(1 for line in text.splitlines() if line.rstrip().endswith("SLOWER")) >= 5
    assert "float16 2x384x384, 2x384x384" in text  # short shape labels
    monkeypatch.setenv("COLUMNS", "400")
    assert "every row:" not in zl_report.render(model, "text")  # a table that fits is left whole
