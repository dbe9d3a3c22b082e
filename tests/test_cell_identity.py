"""A cell's identity (run_identity.json) as one frozen record, read and written by
zl_core.interface.identity alone: typed for what the core decides on, every field kept as
written, and identities of older cells read with the fields they lack as absent."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import attrs
import pytest
from test_campaign_engine import engine_parts, settings
from zl_core.cells.cell import run_cell
from zl_core.interface import identity as identity_module
from zl_core.interface.identity import CellIdentity, fill_identity, merge_identity, read_identity
from zl_core.interface.opspec import OpSpec

PACKAGES = Path(__file__).resolve().parents[1] / "packages"


def test_a_finished_cell_reads_typed(fake_host, tmp_path):
    backend, provider, _ = engine_parts(fake_host)
    request = settings().request(op=OpSpec.parse("gemm"), backend=backend, device="0",
                                 out_dir=tmp_path / "cell", env={}, side="A", autotune_mode="record",
                                 replay_from=None)
    out = run_cell(fake_host, provider, request)
    ident = read_identity(out.cell_dir)
    assert isinstance(ident, CellIdentity)
    raw = json.loads((out.cell_dir / "run_identity.json").read_text())
    assert ident.to_json() == raw  # every field as written, the provider's and plugins' too
    assert (ident.finished, ident.interrupted, ident.rc, ident.timed_out) == (True, False, 0, False)
    assert ident.device == "0" and ident.provider == "fake" and ident.autotune_mode == "record"
    assert ident.host == raw["host"] and ident.elapsed_s == raw["elapsed_s"]
    assert ident.phases is not None and ident.phases["wall_s"] == raw["phases"]["wall_s"]
    assert ident.success_rows == out.success_rows and ident.markers == out.markers
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ident.fields = {}  # type: ignore[misc]


def test_an_older_identity_reads_its_missing_fields_as_absent():
    # As a cell of an early zl wrote it: a numeric device, no host, no phases, no end.
    old = CellIdentity.from_json({"backend": "cuda", "device": 0, "timer": "graph", "rc": "0",
                                  "skips": "not a list", "markers": {"X": 2}, "custom": [1]})
    assert old.device == "0" and old.rc == 0 and old.host is None and old.phases is None
    assert (old.finished, old.interrupted, old.elapsed_s, old.skips) == (False, False, None, ())
    assert old.markers == {"X": 2} and old["custom"] == [1] and old.get("l2") is None
    assert old.to_json()["device"] == 0  # written back as it was read


def test_merge_and_fill_write_through_the_record(tmp_path):
    assert read_identity(tmp_path) is None
    merged = merge_identity(tmp_path, {"device_name": None, "rc": 1})
    assert merged == read_identity(tmp_path) and merged.rc == 1
    filled = fill_identity(tmp_path, {"device_name": "GPU", "rc": 0, "torch_version": "2.11"})
    assert (filled["device_name"], filled.rc, filled["torch_version"]) == ("GPU", 1, "2.11")
    assert json.loads((tmp_path / "run_identity.json").read_text()) == filled.to_json()


def _reads_the_identity_file(path: Path) -> list[int]:
    """Lines of ``path`` that parse JSON from an expression naming the identity."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("load", "loads") and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "json"
            and any(word in ast.unparse(arg).lower() for arg in node.args
                    for word in ("identity", "run_identity"))]


def test_only_the_identity_module_parses_run_identity_json():
    own = Path(identity_module.__file__)
    found = {str(p.relative_to(PACKAGES)): lines for p in sorted(PACKAGES.glob("*/src/**/*.py"))
             if p != own and (lines := _reads_the_identity_file(p))}
    assert found == {}, "read a cell's identity with zl_core.interface.identity.read_identity"
    assert _reads_the_identity_file(own)  # the check sees the one reader


def test_the_reader_check_sees_another_reader(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import json\n\ndef f(layout):\n    return json.loads(layout.identity.read_text())\n")
    assert _reads_the_identity_file(sample) == [4]
