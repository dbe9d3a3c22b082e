"""Failures recorded, never swallowed: what used to pass silently now says what failed."""

from __future__ import annotations

import json
import logging
import sys
import types

import pytest
from zl_core import Backend, PluginHost
from zl_core.ir import compare_cells

KERNEL = "#blocked = #ttg.blocked<{}>\ntt.func @k() { tt.return }\n"


def _cell(root, variants: str | None = None, record: str | None = None):
    """A cell folder with one dumped kernel, and a variants.json / autotune record as given."""
    (root / "ttgir" / "s0" / "k").mkdir(parents=True)
    (root / "ttgir" / "s0" / "k" / "v0.ttgir").write_text(KERNEL)
    if variants is not None:
        (root / "ttgir" / "variants.json").write_text(variants)
    if record is not None:
        (root / "autotune_records").mkdir()
        (root / "autotune_records" / "k.json").write_text(record)
    return root


def test_a_corrupt_variants_file_or_autotune_record_is_named_not_read_as_empty(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="zl_core")
    a = _cell(tmp_path / "A", variants='{"s0/k/v0.ttgir": {"par', record="not json")
    b = _cell(tmp_path / "B")
    cmp = compare_cells(a, b)
    assert cmp.files_a == cmp.files_b == 1  # the comparison itself goes on
    said = [r.getMessage() for r in caplog.records if r.name == "zl_core.ir.cells"]
    assert len(said) == 2, said
    assert str(a / "ttgir" / "variants.json") in said[0] and "launch parameters" in said[0]
    assert str(a / "autotune_records" / "k.json") in said[1] and "re-run that cell" in said[1]


def test_a_cell_without_variants_or_records_warns_of_nothing(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="zl_core")
    good = json.dumps({"s0/k/v0.ttgir": {"params": {"num_warps": 4}}})
    compare_cells(_cell(tmp_path / "A", variants=good), _cell(tmp_path / "B"))
    assert [r for r in caplog.records if r.name == "zl_core.ir.cells"] == []


class _BrokenNamespace:
    @staticmethod
    def device_count():
        raise RuntimeError("CUDA driver initialization failed")


def test_a_broken_torch_counts_no_devices_and_says_why(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="zl_core")
    fake_torch = types.ModuleType("torch")
    fake_torch.brokenacc = _BrokenNamespace()
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    host = PluginHost()
    backend = Backend(name="brokenacc", torch_namespace="brokenacc")
    assert host.enumerate_devices(backend) == []
    said = [r.getMessage() for r in caplog.records if r.name == "zl_core.plugins.backends"]
    assert said and "torch.brokenacc failed (RuntimeError: CUDA driver initialization failed)" in said[0]


def test_no_torch_at_all_is_no_devices_without_a_warning(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="zl_core")
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ModuleNotFoundError
    assert PluginHost().enumerate_devices(Backend(name="brokenacc", torch_namespace="brokenacc")) == []
    assert [r for r in caplog.records if r.name == "zl_core.plugins.backends"] == []


def test_unreadable_dask_task_events_are_said_not_skipped(tmp_path):
    pytest.importorskip("distributed")
    from zl_core.campaigns.dask_executor import TASKS_TSV, DaskExecutor

    class Client:
        def get_events(self, topic):
            raise OSError("scheduler connection closed")

    class Sink:
        def __init__(self):
            self.lines = []

        def line(self, text):
            self.lines.append(text)

    executor = DaskExecutor("tcp://127.0.0.1:1", campaign_root=tmp_path)
    runtime = types.SimpleNamespace(sink=Sink())
    executor._record_attempts(Client(), {"zl-mm-1": "mm"}, runtime)
    assert not (tmp_path / TASKS_TSV).exists()
    assert runtime.sink.lines == [(f"{TASKS_TSV} not written: the scheduler's task events cannot be "
                                   "read (OSError: scheduler connection closed); which worker ran "
                                   "each operator is not recorded")]
