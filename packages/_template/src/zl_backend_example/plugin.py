"""A zl backend for "Example" accelerators -- a template to copy, not a real vendor.

Each hook receives the backend it is asked about and answers only for its own,
returning None otherwise. Leave out any hook you have nothing to say for: zl then
falls back (no sampler, recoverable capture errors, devices from torch).
"""

from __future__ import annotations

from zl_core import Backend, hookimpl
from zl_core.foundation.vendor_tools import answers_for, classify_by_markers, run_tool

BACKEND = Backend(
    name="example",
    aliases=("ex",),
    visibility_env_keys=("EXAMPLE_VISIBLE_DEVICES",),
    torch_namespace="example",          # torch.example would hold the device API
    torch_extension="torch_example",    # imported first to create it
    vendor="example",
    graph_capture=False,
    description="Example Corp accelerators (template)",
)

TOOL = "example-smi"
TOOL_TIMEOUT_S = 15  # a hung vendor tool must not hang zl
# Your runtime's own wording of errors after which a kernel is broken (lower case).
FATAL_MARKERS = ("example error: bad address",)
# The vendor tool prints one line per device, e.g.
#   device=0 core_mhz=1500 mem_mhz=1200 temp_c=41 power_w=98.5 busy_pct=37
FIELDS = {"device": "index", "core_mhz": "sm_clock_mhz", "mem_mhz": "mem_clock_mhz",
          "temp_c": "temp_c", "power_w": "power_w", "busy_pct": "util_pct"}


def _rows(raw: str) -> list[dict[str, str]]:
    """One row of the common telemetry columns per device line of the tool's output."""
    rows = []
    for line in raw.splitlines():
        pairs = dict(p.split("=", 1) for p in line.split() if "=" in p)
        if pairs.get("device", "").isdigit():
            rows.append({column: pairs.get(key, "") for key, column in FIELDS.items()})
    return rows


@hookimpl
def zl_backends() -> list[Backend]:
    return [BACKEND]


@hookimpl
@answers_for(BACKEND)
def zl_enumerate_devices(backend: Backend) -> list[str] | None:
    # run_tool gives None when the tool is absent, fails or hangs: zl then falls back.
    out = run_tool([TOOL, "--query"], TOOL_TIMEOUT_S)
    if out is None:
        return None
    return [row["index"] for row in _rows(out)] or None


@hookimpl
@answers_for(BACKEND)
def zl_classify_capture_error(backend: Backend, exc: BaseException) -> str | None:
    return classify_by_markers(exc, FATAL_MARKERS)


@hookimpl
@answers_for(BACKEND)
def zl_telemetry_command(backend: Backend, device: str | None) -> list[str] | None:
    argv = [TOOL, "--query"]
    return [*argv, "--device", device] if device else argv


@hookimpl
@answers_for(BACKEND)
def zl_parse_telemetry(backend: Backend, raw: str) -> list[dict[str, str]] | None:
    return _rows(raw)
