"""The timestamps zl writes: inside files (campaign.json, identities, status.tsv,
telemetry) ISO-8601 in UTC to the second, e.g. ``2026-09-10T07:41:12Z``; in the names of
folders it makes (a campaign, a ``zl run`` cell, a set-aside ``.aside/<stamp>``) the local
time, compact, e.g. ``20260910-094112``, so a listing sorts by when they were made and
reads in the clock of whoever ran it."""

from __future__ import annotations

import time

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
FOLDER_FORMAT = "%Y%m%d-%H%M%S"


def utc_stamp(epoch: float | None = None) -> str:
    """``epoch`` (seconds; now when None) as zl's UTC timestamp."""
    return time.strftime(UTC_FORMAT, time.gmtime(epoch))


def folder_stamp(epoch: float | None = None) -> str:
    """``epoch`` (seconds; now when None) in local time, as a folder name's stamp."""
    return time.strftime(FOLDER_FORMAT, time.localtime(epoch))
