"""The report model and campaign.json are contracts: JSON Schemas shipped in zl_core/schemas,
checked against the real device campaigns kept in docs/validation/data, the pair model of their
cells, and the synthetic fixture the browser and width tests draw. A key renamed in a builder
(or left stale in the fixture) fails here, not on a reader's page."""

from __future__ import annotations

import copy
import json
import tarfile
from pathlib import Path

import pytest
from synthetic_report import rounds_model, screen_model
from zl_core.report import SCHEMA
from zl_core.report.dispatch import build
from zl_core.report.pair import build_pair

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "packages" / "zl-core" / "src" / "zl_core" / "schemas"
DATA = ROOT / "docs" / "validation" / "data"
ARCHIVES = [*sorted(DATA.glob("2026-12-03-a[ab]-*.tgz")), DATA / "2026-12-05-two-sources" / "campaign.tgz",
            DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz"]  # sealed: classes, checks


def _validator(name: str):
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


REPORT = _validator("report")
CAMPAIGN = _validator("campaign")


def _errors(validator, document) -> list[str]:
    # The model as zl writes it: through JSON, where tuples are lists.
    document = json.loads(json.dumps(document, default=str))
    return ["/".join(map(str, e.absolute_path)) + ": " + e.message[:160]
            for e in validator.iter_errors(document)]


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> list[Path]:
    out = []
    for archive in ARCHIVES:
        dest = tmp_path_factory.mktemp(archive.parent.name if archive.name == "campaign.tgz" else archive.stem)
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        out += [p.parent for p in dest.rglob("campaign.json")
                if p.parent.name.startswith(("ab_", "aa_", "screen_"))]
    assert len(out) >= len(ARCHIVES)
    return out


def test_the_schemas_are_valid_json_schemas_and_name_the_model_version():
    schema = json.loads((SCHEMAS / "report.schema.json").read_text())
    for kind in ("pair", "rounds", "screen"):
        assert schema["$defs"][kind]["properties"]["schema"] == {"const": SCHEMA}


def test_real_device_campaigns_and_their_reports_follow_the_schemas(campaigns):
    kinds = set()
    for campaign in campaigns:
        meta = json.loads((campaign / "campaign.json").read_text())
        assert not _errors(CAMPAIGN, meta), (campaign.name, _errors(CAMPAIGN, meta)[:3])
        model = build(campaign, allow_mismatch=True)
        kinds.add(model["kind"])
        assert not _errors(REPORT, model), (campaign.name, _errors(REPORT, model)[:3])
        if model["kind"] == "screen":
            for op_dir in (p for p in campaign.iterdir() if (p / "A").is_dir() and (p / "B").is_dir()):
                pair = build_pair(op_dir / "A", op_dir / "B", allow_mismatch=True)
                kinds.add(pair["kind"])
                assert not _errors(REPORT, pair), (op_dir.name, _errors(REPORT, pair)[:3])
    assert kinds == {"pair", "rounds", "screen"}


def test_the_synthetic_fixture_is_a_real_model():
    for model in (rounds_model(12), screen_model(12)):
        assert not _errors(REPORT, model), _errors(REPORT, model)[:3]


@pytest.mark.parametrize("path, new_name", [
    (("rows", 0, "stats", "deltas_pct"), "deltas"),        # the rename that emptied every forest plot
    (("rows", 0, "deltas_pct"), "deltas"),
    (("summary", "operators", 0, "verdict"), "call"),
    (("summary", "plan", "rules"), "rules_version"),
    (("caliber", "common"), "shared"),
])
def test_a_renamed_key_fails_the_schema(campaigns, path, new_name):
    campaign = next(c for c in campaigns if c.name.startswith("ab_"))
    model = json.loads(json.dumps(build(campaign, allow_mismatch=True), default=str))
    assert not _errors(REPORT, model)
    broken = copy.deepcopy(model)
    parent = broken
    for step in path[:-1]:
        parent = parent[step]
    parent[new_name] = parent.pop(path[-1])
    assert _errors(REPORT, broken), f"renaming {path[-1]} to {new_name} went unnoticed"


def test_a_verdict_outside_the_documented_ones_fails_the_schema():
    model = rounds_model(3)
    model["rows"][0]["verdict"] = "FASTERISH"
    assert any("FASTERISH" in e for e in _errors(REPORT, model))


def test_campaign_json_refuses_a_renamed_or_mistyped_field(campaigns):
    meta = json.loads((next(c for c in campaigns if c.name.startswith("ab_")) / "campaign.json").read_text())
    renamed = dict(meta)
    renamed["rounds_planned"] = renamed.pop("rounds")
    assert _errors(CAMPAIGN, renamed)
    assert _errors(CAMPAIGN, {**meta, "rounds": 0})
    assert _errors(CAMPAIGN, {**meta, "kind": "sweep"})


def test_a_report_written_under_schema_1_is_not_taken_for_schema_2():
    """docs/report-json.md: reports of schema 1 carry rules-1 intervals; the file says so."""
    old = json.loads((DATA / "2026-12-03-aa-four-ops-30ms-report.json").read_text())
    assert old["schema"] == 1
    errors = _errors(REPORT, old)
    assert any("2 was expected" in e for e in errors) and any("variance" in e for e in errors)
