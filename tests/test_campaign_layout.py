"""The campaign layout object and the atomic write every campaign file goes through."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import attrs
import pytest
from zl_core.foundation.atomic import write_json_atomic, write_text_atomic
from zl_core.foundation.errors import BadInputError
from zl_core.store.layout import CampaignLayout, cell_label, parse_round, round_name
from zl_core.store.record import CampaignRecord, read_campaign, write_campaign


def test_cells_of_a_screen_and_of_rounds_live_where_the_layout_says(tmp_path):
    layout = CampaignLayout.create(tmp_path, "ab", "MY_SWITCH")
    assert layout.root.parent == tmp_path and layout.name.startswith("ab_MY_SWITCH_")
    assert layout.cell_dir("mm", "A") == layout.root / "mm" / "A"
    assert layout.cell_dir("mm", "B", 3) == layout.root / "mm" / "r03" / "B"
    assert round_name(12) == "r12" and parse_round("r12") == 12 and parse_round("rx") is None
    assert cell_label("mm", "B", 3) == "mm r03/B" and cell_label("mm", "A") == "mm A"
    for r, sides in ((1, "AB"), (2, "B")):
        for s in sides:
            layout.cell_dir("mm", s, r).mkdir(parents=True)
    (layout.op_dir("mm") / "notes").mkdir()
    assert layout.rounds_on_disk("mm") == {1: {"A", "B"}, 2: {"B"}}
    assert layout.rounds_on_disk("absent") == {}


def test_a_second_campaign_in_the_same_second_gets_its_own_folder(tmp_path):
    first = CampaignLayout.create(tmp_path, "screen", "S")
    second = CampaignLayout.create(tmp_path, "screen", "S")
    assert first.root != second.root and second.root.is_dir()


def test_atomic_write_replaces_whole_files_and_leaves_no_sibling(tmp_path):
    path = tmp_path / "table.tsv"
    path.write_text("old\n")
    write_text_atomic(path, "new\n")
    write_json_atomic(tmp_path / "x.json", {"a": 1})
    assert path.read_text() == "new\n" and (tmp_path / "x.json").read_text() == '{\n  "a": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.tsv", "x.json"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "campaign.json"
    path.write_text("old")
    with pytest.raises(TypeError):
        write_text_atomic(path, None)  # type: ignore[arg-type]
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["campaign.json"]


def test_aa_campaigns_are_their_own_kind_and_old_ones_still_read(tmp_path):
    layout = CampaignLayout.create(tmp_path, "aa", "none")
    write_campaign(layout, kind="aa", switch="none")
    meta = read_campaign(layout.root)
    assert meta.kind == "aa" and meta.is_aa and meta.is_rounds
    assert CampaignRecord.from_json({"kind": "ab", "aa": True}).is_aa
    assert not CampaignRecord.from_json({"kind": "ab"}).is_aa
    with pytest.raises(ValueError):
        write_campaign(layout, kind="abba")
    with pytest.raises(ValueError, match="no field swtich"):
        write_campaign(layout, kind="ab", swtich="X")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "campaign.json").write_text("{")
    with pytest.raises(BadInputError, match="corrupt"):
        read_campaign(tmp_path / "broken")


def test_a_campaign_record_rewrites_its_file_unchanged_but_for_what_is_set(tmp_path):
    """Keys stay in the file's order, a key of a later version is kept, a field set since
    is appended, and a null the file holds stays a null."""
    original = {"schema": 1, "kind": "ab", "switch": "S", "device": None, "ops": ["add"],
                "rounds": "auto", "threshold_pct": 2.0, "from_the_future": {"x": [1]},
                "created": "2026-01-01T00:00:00Z"}
    (tmp_path / "campaign.json").write_text(json.dumps(original))
    record = read_campaign(tmp_path)
    assert record.ops == ("add",) and record.device is None and record.unknown == {"from_the_future": {"x": [1]}}
    assert list(record.to_json().items()) == list(original.items())
    marked = attrs.evolve(record, pid=7, state="running").to_json()
    assert list(marked) == [*original, "pid", "state"] and marked["pid"] == 7


def test_the_real_campaigns_read_back_to_the_same_json():
    data = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data"
    archives = sorted(data.rglob("*.tgz"))
    read = 0
    for archive in archives:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.name.endswith("campaign.json"):
                    original = json.loads(tar.extractfile(member).read())
                    record = CampaignRecord.from_json(original, file=f"{archive.name}:{member.name}")
                    assert json.dumps(record.to_json()) == json.dumps(original), member.name
                    read += 1
    assert read >= 5


def test_a_cell_layout_names_the_files_its_writers_write(tmp_path):
    from zl_core.interface import caliber, contract, rows, ttgir_layout
    from zl_core.store.layout import CellLayout

    cell = CampaignLayout(tmp_path).cell("vllm:moe", "B", 2)
    assert cell == CellLayout(tmp_path / "vllm+moe" / "r02" / "B")
    assert cell.identity.name == caliber.IDENTITY_NAME and cell.results.name == rows.RESULTS_NAME
    assert cell.log.name == rows.LOG_NAME and cell.autotune_records.name == contract.AUTOTUNE_RECORDS_DIR
    assert cell.ttgir_index == cell.root / ttgir_layout.TTGIR_DIR / ttgir_layout.INDEX_NAME
    assert not cell.wrote()
    cell.root.mkdir(parents=True)
    caliber.write_identity(cell.root, {"op": "moe"})
    assert cell.wrote() and caliber.read_identity(cell.root)["op"] == "moe"


def test_status_rows_read_back_as_written_and_damaged_values_read_as_none(tmp_path):
    from zl_core.decisions.status import read_status
    from zl_core.store.status_table import COLUMNS, StatusRow

    old_columns = [c for c in COLUMNS if c not in ("device", "stalled")]  # a campaign from before them
    good = dict(zip(old_columns, ["t", "2", "mm", "B", "1", "0", "3.5", "0", "4", "0", "0", "0", "0",
                                  "10.000", "13.500", "mm/r02/B", "a,b"], strict=True))
    bad = {**good, "round": "x", "start": "?", "rc": "9"}
    lines = ["\t".join(old_columns), "\t".join(good.values()), "\t".join(bad.values()), "t\t1\tmm"]
    (tmp_path / "status.tsv").write_text("\n".join(lines) + "\n")
    rows = read_status(tmp_path)
    assert len(rows) == 2  # the line cut short is dropped
    assert rows[0].to_dict() == {**good, "device": "", "stalled": ""}
    assert rows[0].key == ("mm", 2, "B") and rows[0].elapsed == 3.5 and rows[0].end_s == 13.5
    assert rows[0].flag_list == ["a", "b"] and not rows[0].failed
    assert rows[1].key is None and rows[1].start_s is None and rows[1].failed
    assert StatusRow.from_dict(rows[1].to_dict()) == rows[1]


def test_screen_rows_read_back_as_written(tmp_path):
    from zl_core.store.screen_table import ScreenRow, read_screen

    archive = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data" / "2026-12-05-two-sources" / "campaign.tgz"
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("screen.json"))
        written = json.loads(tar.extractfile(member).read())["ops"]
    (tmp_path / "screen.json").write_text(json.dumps({"schema": 1, "ops": [*written, {"op": "old", "later": 1}]}))
    rows = read_screen(tmp_path)
    assert [row.to_dict() for row in rows] == [*written, {"op": "old", "later": 1}]
    assert rows[0].op == written[0]["op"] and rows[0].side("kernels", "B") == written[0]["kernels_b"]
    assert rows[0].caliber["backend"] == written[0]["backend"]
    assert rows[-1].verdict == "" and rows[-1].op_file is None and rows[-1].unknown == {"later": 1}
    assert ScreenRow.from_dict({"op": 3}) is None and ScreenRow.from_dict({"op": "x", "verdict": 1}) is None


def test_telemetry_tsv_has_one_column_list_for_its_writers_and_readers():
    from zl_core.campaigns import telemetry_sampler
    from zl_core.decisions import drift
    from zl_core.foundation import backend
    from zl_core.plugins import host
    from zl_core.store.layout import TELEMETRY_TSV_COLUMNS

    assert ("timestamp", *backend.TELEMETRY_COLUMNS) == TELEMETRY_TSV_COLUMNS
    assert host.TELEMETRY_COLUMNS is backend.TELEMETRY_COLUMNS
    assert drift.TELEMETRY_COLUMNS is TELEMETRY_TSV_COLUMNS is telemetry_sampler.TELEMETRY_COLUMNS
