"""The campaign layout object and the atomic write every campaign file goes through."""

from __future__ import annotations

import os

import pytest
from zl_core.atomic import write_json_atomic, write_text_atomic
from zl_core.errors import BadInputError
from zl_core.store.layout import CampaignLayout, cell_label, parse_round, round_name
from zl_core.store.record import is_aa, read_campaign, write_campaign


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
    assert meta["kind"] == "aa" and is_aa(meta)
    assert is_aa({"kind": "ab", "aa": True}) and not is_aa({"kind": "ab"})
    with pytest.raises(ValueError):
        write_campaign(layout, kind="abba")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "campaign.json").write_text("{")
    with pytest.raises(BadInputError, match="corrupt"):
        read_campaign(tmp_path / "broken")
