"""FOREIGN_VENDOR_MODULE: vendor segments compared whole, never by prefix."""

from __future__ import annotations

import sys
import types

from zl_flaggems.cell import markers
from zl_flaggems.cell.plugins import foreign


def test_vendor_of_takes_the_segment_after_backend():
    assert foreign.vendor_of("flag_gems.runtime.backend._nvidia") == "nvidia"
    assert foreign.vendor_of("flag_gems.runtime.backend._nvidia.hopper.ops.mm") == "nvidia"
    assert foreign.vendor_of("flag_gems.runtime.backend._nvidia_ext.ops") == "nvidia_ext"
    assert foreign.vendor_of("flag_gems.runtime.backend.device_finder") is None
    assert foreign.vendor_of("flag_gems.runtime.backend.__init__") is None
    assert foreign.vendor_of("flag_gems.runtime") is None
    assert foreign.vendor_of("other.runtime.backend._nvidia") is None


def test_foreign_vendors_compare_whole_segments():
    names = ["flag_gems.runtime.backend._nvidia.ops", "flag_gems.runtime.backend._nvidia_ext",
             "flag_gems.runtime.backend._mthreads.ops.mm", "flag_gems.runtime.backend._mthreads_extra",
             "flag_gems.ops.add", "torch.cuda"]
    assert foreign.foreign_vendors(names, "nvidia") == ["mthreads", "mthreads_extra", "nvidia_ext"]
    assert foreign.foreign_vendors(names, "mthreads") == ["mthreads_extra", "nvidia", "nvidia_ext"]
    assert foreign.foreign_vendors(names[:1], "nvidia") == []


def test_check_prints_one_marker_with_the_active_vendor(monkeypatch, capsys):
    markers.reset()
    gems = types.SimpleNamespace(vendor_name="mthreads")
    monkeypatch.setitem(sys.modules, "flag_gems", gems)
    for name in ("flag_gems.runtime.backend._mthreads.ops", "flag_gems.runtime.backend._nvidia.hopper.mm",
                 "flag_gems.runtime.backend._nvidia.ops"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    assert foreign.check() == "FOREIGN_VENDOR_MODULE active=mthreads loaded=nvidia"
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "FOREIGN_VENDOR_MODULE active=mthreads loaded=nvidia"
    assert markers.counts()["FOREIGN_VENDOR_MODULE"] == 1
    markers.reset()


def test_check_is_quiet_without_foreign_modules(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "flag_gems", types.SimpleNamespace(vendor_name="nvidia"))
    monkeypatch.setitem(sys.modules, "flag_gems.runtime.backend._nvidia.ops", types.ModuleType("x"))
    for name in [n for n in sys.modules if foreign.vendor_of(n) not in (None, "nvidia")]:
        monkeypatch.delitem(sys.modules, name)
    assert foreign.check() is None
    assert "FOREIGN" not in capsys.readouterr().out
