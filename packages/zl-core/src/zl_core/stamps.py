"""The one timestamp zl writes (campaign.json, identities, status.tsv, telemetry): ISO-8601
in UTC to the second, e.g. ``2026-09-10T07:41:12Z``."""

from __future__ import annotations

import time

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_stamp(epoch: float | None = None) -> str:
    """``epoch`` (seconds; now when None) as zl's UTC timestamp."""
    return time.strftime(UTC_FORMAT, time.gmtime(epoch))
