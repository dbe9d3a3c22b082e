"""The sealed FlagGems campaigns run on the device (docs/validation/2026-12-06-h100-sealed-campaign.md),
read back here without one: every file still matches its receipt, every receipt follows the
shipped schema, the control cells compiled side A's TTGIR, each side's accuracy tests are the
ones the write-up quotes, and re-accounting reproduces the sealed classes at the sealed floor,
never promotes at a higher one, and never writes inside the run."""

from __future__ import annotations

import hashlib
import json
import tarfile
from pathlib import Path

import pytest
from zl_core.cli import main
from zl_core.seal import receipts

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "validation" / "data" / "2026-12-06-h100-sealed-campaign"
RECEIPT_SCHEMA = json.loads((ROOT / "packages/zl-core/src/zl_core/schemas/receipt.schema.json").read_text())
#: What the write-up states per workload: class, tests passed on side A and on side B.
EXPECTED = {
    "mm": ("R", 7, 7), "bmm": ("R", 6, 6), "addmm": ("R", 24, 24),
    # The eight-operator campaign ran no checks for these (identical TTGIR stopped them
    # before checks were run for such workloads); the follow-up campaigns did.
    "softmax": ("B", 16, 16), "layer_norm": ("B", 25, 25), "sum": ("B", 3, 3), "relu": ("B", 6, 6),
    "mul": ("B", 83, 83),
}


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> list[Path]:
    out = []
    for archive in ("campaign.tgz", "unchanged-checks.tgz"):
        dest = tmp_path_factory.mktemp(archive.split(".")[0])
        with tarfile.open(DATA / archive) as tar:
            tar.extractall(dest, filter="data")
        out += sorted(p.parent for p in dest.rglob("classes.json"))
    assert len(out) == 3
    return out


def _digest(cell: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((cell / "ttgir").rglob("*.ttgir")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_the_device_campaigns_are_as_receipted_and_as_written_up(campaigns):
    seen: dict[str, tuple[str, int | None, int | None]] = {}
    for campaign in campaigns:
        assert receipts.check(campaign) == [], campaign.name
        found = list(campaign.rglob("receipt.json"))
        assert len(found) >= 6  # the campaign and each cell: rounds, control, checks
        for path in found:
            jsonschema.validate(json.loads(path.read_text()), RECEIPT_SCHEMA)
        frozen = json.loads((campaign / "receipt.json").read_text())["frozen"]
        assert frozen and frozen["campaign"], "a sealed campaign names the matrix it ran"
        for entry in json.loads((campaign / "classes.json").read_text())["classes"]:
            op, ev = entry["op"], entry["evidence"]
            # The control side (the switch reverted) compiled side A's TTGIR byte for byte.
            assert _digest(campaign / op / "r01" / "C") == _digest(campaign / op / "r01" / "A"), op
            a, b = ev["correctness_a"], ev["correctness_b"]
            if a is None:  # kept where a later campaign checked the same workload
                assert op not in seen and entry["class"] == "B"
                continue
            assert a["failed"] == 0 and b["failed"] == 0 and not a["problem"] and not b["problem"]
            seen[op] = (entry["class"], a["passed"], b["passed"])
    assert seen == EXPECTED


def test_a_campaign_where_no_operator_was_timed_still_says_where_it_ran(campaigns):
    # The follow-ups timed nothing (every workload stopped on identical TTGIR): their
    # round-1 cells' conditions head the report all the same.
    from zl_core.report.dispatch import build

    for campaign in campaigns:
        model = build(campaign)
        assert model["caliber"]["common"]["device_name"] == "NVIDIA H100 80GB HBM3", campaign.name
        assert model["caliber"]["common"]["triton_version"] == "3.6.0"


def test_the_device_campaigns_reaccount_to_their_sealed_classes(campaigns, tmp_path, capsys):
    for n, campaign in enumerate(campaigns):
        sealed = json.loads((campaign / "classes.json").read_text())
        floor = sealed["rule"]["launch_floor"]
        before = sorted(p.relative_to(campaign).as_posix() for p in campaign.rglob("*"))
        for k, at in enumerate((floor, floor + 4, 0)):
            out = tmp_path / f"{n}-{k}"
            assert main(["reaccount", str(campaign), "--out", str(out), "--launch-floor", str(at)]) == 0
            derived = {c["op"]: c["class"] for c in json.loads((out / "classes.json").read_text())["classes"]}
            # No workload of these campaigns has fewer layout conversions on side B: none is
            # G or C at any floor, so every floor gives the sealed classes.
            assert derived == {c["op"]: c["class"] for c in sealed["classes"]}, (campaign.name, at)
        assert main(["reaccount", str(campaign), "--out", str(campaign / "derived")]) == 2
        assert "lies inside campaign" in capsys.readouterr().err
        assert sorted(p.relative_to(campaign).as_posix() for p in campaign.rglob("*")) == before
