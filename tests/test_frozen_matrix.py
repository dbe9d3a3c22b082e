"""A sealed campaign's matrix.json as a frozen record: typed for what the commands run
from it, every key kept as frozen (the seal binds the file), and matrices frozen by
earlier versions (two kept from device runs) read as they were written."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import attrs
import pytest
from zl_core.app import seal
from zl_core.app.options import AbOptions
from zl_core.seal import freeze
from zl_core.seal.matrix import FrozenMatrix

DATA = Path(__file__).resolve().parents[1] / "docs" / "validation" / "data"
KEPT = [DATA / "2026-12-06-h100-sealed-campaign" / "campaign.tgz",
        DATA / "2026-12-06-h100-sealed-checks" / "campaign-slim.tgz"]


def _frozen_dir(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("frozen/") and m.isfile()]
        tar.extractall(into, members=members, filter="data")
    return into / "frozen"


@pytest.mark.parametrize("archive", KEPT, ids=lambda p: p.parent.name)
def test_a_kept_matrix_reads_typed_and_whole(archive, tmp_path):
    folder = _frozen_dir(archive, tmp_path)
    raw = json.loads((folder / freeze.MATRIX_NAME).read_text())
    matrix, _seal = freeze.read(folder)
    assert isinstance(matrix, FrozenMatrix) and matrix.to_json() == raw
    assert (matrix.suite, matrix.backend, matrix.device) == (raw["suite"], raw["backend"], str(raw["device"]))
    assert matrix.switch == (raw["switch"]["name"], str(raw["switch"]["a"]), str(raw["switch"]["b"]))
    assert matrix.timer == raw["measure"]["timer"] and matrix.timeout_s == raw["measure"]["timeout_s"]
    assert [t.op for t in matrix.tasks] == [t["op"] for t in raw["tasks"]]
    assert [t.files for t in matrix.tasks] == [t["files"] for t in raw["tasks"]]
    checks = [(t.check.file, list(t.check.select)) if t.check else None for t in matrix.tasks]
    assert checks == [(t["check"]["file"], t["check"]["select"]) if t.get("check") else None
                      for t in raw["tasks"]]
    # The A/B command runs it as frozen.
    options = seal.frozen_options("ab", folder, AbOptions())
    assert [o.split(":")[0] for o in options.ops] == [t["op"] for t in raw["tasks"]]
    assert options.rounds == (raw["rounds"] if isinstance(raw["rounds"], int) else None)
    assert options.switch.switch == raw["switch"]["name"] and options.where.suite == raw["suite"]


def test_a_matrix_without_later_keys_reads_them_as_absent():
    old = FrozenMatrix.from_json({"schema": 1, "suite": "fake", "rounds": "auto", "max_rounds": 12,
                                  "measure": {"timer": "graph", "timeout_s": 600},
                                  "tasks": [{"op": "mm", "dtypes": ["float16"], "timeout_s": 900}]})
    assert (old.rounds, old.max_rounds, old.timing, old.l2, old.control_env) == (None, 12, None, None, ())
    [task] = old.tasks
    assert (task.op, task.dtypes, task.timeout_s, task.check, task.check_tests) == ("mm", ("float16",), 900.0,
                                                                                     None, None)
    assert freeze.switch_vars(attrs.evolve(old, fields={**old.to_json(), "switch": {"name": "X"},
                                                       "control": {"env": {"Y": "1"}}})) == ("X", "Y")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        old.fields = {}  # type: ignore[misc]
