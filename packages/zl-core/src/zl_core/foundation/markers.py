"""The pluggy markers of the ``zl`` project.

Vendor and provider packages import :data:`hookimpl` (re-exported by ``zl_core``);
the spec marker stays private to :mod:`zl_core.plugins.hookspecs`.
"""

from __future__ import annotations

import pluggy

PROJECT = "zl"
ENTRY_POINT_GROUP = "zl"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
