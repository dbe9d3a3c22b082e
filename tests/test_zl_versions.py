"""A cell's provenance names every zl distribution installed when it starts: the list is
kept between cells (reading every distribution's metadata per cell was a quarter of an
orchestrator's time) and read again once a folder on the import path changes, as an
install, upgrade or removal changes its site-packages folder."""

from __future__ import annotations

import shutil
import time

from zl_core.cells import cell_setup
from zl_core.foundation.markers import ENTRY_POINT_GROUP


def install(site, name: str, version: str) -> None:
    """A distribution as pip leaves it: its dist-info folder, with a zl entry point."""
    time.sleep(0.02)  # the kernel stamps a folder's mtime with a coarse clock (a few ms)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nthing = {name.replace('-', '_')}.plugin\n")


def test_an_install_between_cells_is_seen_and_nothing_is_read_again_without_one(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    install(site, "zl-backend-acme", "1.0")
    reads = []
    real = cell_setup._read_zl_versions
    monkeypatch.setattr(cell_setup, "_read_zl_versions", lambda: reads.append(1) or real())

    assert cell_setup.zl_versions()["zl-backend-acme"] == "1.0"
    assert "zl-core" in cell_setup.zl_versions()
    assert len(reads) == 1  # the second cell's list came from the first's

    shutil.rmtree(site / "zl_backend_acme-1.0.dist-info")  # pip install -U: old out, new in
    install(site, "zl-backend-acme", "1.1")
    assert cell_setup.zl_versions()["zl-backend-acme"] == "1.1"

    time.sleep(0.02)
    shutil.rmtree(site / "zl_backend_acme-1.1.dist-info")
    assert "zl-backend-acme" not in cell_setup.zl_versions()
    assert len(reads) == 3


def test_the_caller_cannot_change_what_the_next_cell_records(tmp_path):
    first = cell_setup.zl_versions()
    first["zl-core"] = "tampered"
    assert cell_setup.zl_versions()["zl-core"] != "tampered"
