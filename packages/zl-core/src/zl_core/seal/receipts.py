"""Receipts: what a finished campaign was made of, by SHA-256, so a reviewer can check
months later that nothing in it changed and which harness and rules produced it.

Each finished cell gets ``receipt.json`` (every file of the cell and the identity fields
that say where it ran); the campaign gets ``receipt.json`` (zl's own files, the sources,
the rules that judged it, the frozen matrix it ran, its tables, and each cell receipt's
SHA-256). A campaign run from a frozen matrix is then sealed: its files are made
read-only, and :func:`check` tells a reader whether anything changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from zl_core import __version__
from zl_core.foundation.atomic import write_json_atomic
from zl_core.foundation.errors import BadInputError
from zl_core.foundation.stamps import utc_stamp
from zl_core.interface.identity import read_identity
from zl_core.store.layout import CampaignLayout

from . import digests

RECEIPT = "receipt.json"
CLASSES_FILE = "classes.json"  # seal.account writes it; a receipt binds it
SCHEMA = 1
#: Identity fields a cell receipt repeats: where and with what the cell ran.
IDENTITY_FIELDS = ("provider", "source", "provider_commit", "source_package", "backend", "device",
                   "device_name", "device_uuid", "driver_version", "triton_version", "compiler_build",
                   "compiler_env", "torch_version",
                   "timer", "autotune_mode", "compile_only", "target", "side")
#: Fields an identity may hold under the name a provider gave them first: the package a
#: cell's source holds was "gems_package" (zl-flaggems' identities).
IDENTITY_FIELDS_BEFORE = {"source_package": "gems_package"}


def cell_receipt(cell_dir: Path) -> dict:
    """Every file of one cell by SHA-256 (its autotune records and TTGIR included), and
    where it ran."""
    cell_dir = Path(cell_dir)
    files = {p.relative_to(cell_dir).as_posix(): digests.file_sha256(p)
             for p in sorted(cell_dir.rglob("*")) if p.is_file() and p.name != RECEIPT}
    try:
        identity: Mapping[str, object] = read_identity(cell_dir) or {}
    except BadInputError:  # safe: the identity file's digest is in "files" all the same
        identity = {}
    return {"schema": SCHEMA, "files": files,
            "identity": {k: identity.get(k, identity.get(IDENTITY_FIELDS_BEFORE.get(k, k)))
                         for k in IDENTITY_FIELDS
                         if k in identity or IDENTITY_FIELDS_BEFORE.get(k) in identity}}


def write(layout: CampaignLayout, cells: list[Path], *, rules: int | None,
          frozen: dict | None = None, campaign_json: str | None = None) -> Path:
    """Write the receipt of every cell in ``cells`` and the campaign's; returns the latter.
    ``campaign_json``: campaign.json's text as the finish will write it last (complete),
    which the receipt binds instead of the file as it is now."""
    receipts = {}
    for cell in cells:
        path = write_json_atomic(Path(cell) / RECEIPT, cell_receipt(cell))
        receipts[Path(cell).relative_to(layout.root).as_posix()] = digests.file_sha256(path)
    meta = _json(layout.campaign_file)
    zl = digests.zl_files()
    tables = {p.name: digests.file_sha256(p) for p in
              (layout.campaign_file, layout.status_file, layout.screen_json, layout.screen_tsv,
               layout.report_json, layout.summary_csv, layout.telemetry_file, layout.root / CLASSES_FILE)
              if p.is_file()}
    if campaign_json is not None:
        tables[layout.campaign_file.name] = hashlib.sha256(campaign_json.encode("utf-8")).hexdigest()
    receipt = {"schema": SCHEMA, "campaign": layout.name, "kind": meta.get("kind"),
               "written": utc_stamp(), "zl": {"version": __version__,
                                              "files_sha256": digests.combined(zl), "files": zl},
               "sources": meta.get("sources"), "rules": rules, "frozen": frozen,
               "tables": tables, "cells": receipts}
    return write_json_atomic(layout.root / RECEIPT, receipt)


def seal(layout: CampaignLayout) -> int:
    """Make every file of the campaign read-only; returns how many."""
    count = 0
    for path in layout.root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.chmod(path, path.stat().st_mode & ~0o222)
            count += 1
    return count


def check(campaign: Path) -> list[str]:
    """What changed in a campaign since its receipt was written ([] when nothing); a
    campaign without a receipt is one problem."""
    layout = CampaignLayout(Path(campaign))
    receipt = _json(layout.root / RECEIPT)
    if receipt.get("schema") != SCHEMA:
        return [f"{layout.root / RECEIPT}: no readable receipt"]
    problems = []
    for name, digest in (receipt.get("tables") or {}).items():
        if digests.file_sha256(layout.root / name) != digest:
            problems.append(f"{name} changed")
    for cell, digest in (receipt.get("cells") or {}).items():
        path = layout.root / cell / RECEIPT
        if digests.file_sha256(path) != digest:
            problems.append(f"{cell}/{RECEIPT} changed")
            continue
        frozen = _json(path).get("files") or {}
        now = {k: v for k, v in cell_receipt(layout.root / cell)["files"].items()}
        problems += [f"{cell}: {d}" for d in digests.differences(frozen, now)]
    return problems


def _json(path: Path) -> dict:
    """A JSON object, {} when unreadable: the receipt check then names it (no readable
    receipt, a changed digest); campaign.json has been written by this process."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
