"""A zl backend for "Example" accelerators -- a template to copy, not a real vendor.

Each hook receives the backend it is asked about and answers only for its own,
returning None otherwise. Leave out any hook you have nothing to say for: zl then
falls back (no sampler, recoverable capture errors, devices from torch).
"""

from __future__ import annotations

from zl_core import Backend, hookimpl

BACKEND = Backend(
    name="example",
    aliases=("ex",),
    visibility_env_keys=("EXAMPLE_VISIBLE_DEVICES",),
    torch_namespace="example",          # torch.example would hold the device API
    torch_extension="torch_example",    # imported first to create it
    flaggems_vendor="example",
    graph_capture=False,
    description="Example Corp accelerators (template)",
)

# The vendor tool prints one line per device, e.g.
#   device=0 core_mhz=1500 mem_mhz=1200 temp_c=41 power_w=98.5 busy_pct=37
FIELDS = {"device": "index", "core_mhz": "sm_clock_mhz", "mem_mhz": "mem_clock_mhz",
          "temp_c": "temp_c", "power_w": "power_w", "busy_pct": "util_pct"}


def _mine(backend: Backend) -> bool:
    return backend.name == BACKEND.name


@hookimpl
def zl_backends() -> list[Backend]:
    return [BACKEND]


@hookimpl
def zl_classify_capture_error(backend: Backend, exc: BaseException) -> str | None:
    if not _mine(backend):
        return None
    return "fatal" if "example error: bad address" in str(exc).lower() else None


@hookimpl
def zl_telemetry_command(backend: Backend, device: str | None) -> list[str] | None:
    if not _mine(backend):
        return None
    argv = ["example-smi", "--query"]
    return argv + ["--device", device] if device else argv


@hookimpl
def zl_parse_telemetry(backend: Backend, raw: str) -> list[dict[str, str]] | None:
    if not _mine(backend):
        return None
    rows = []
    for line in raw.splitlines():
        pairs = dict(p.split("=", 1) for p in line.split() if "=" in p)
        if pairs.get("device", "").isdigit():
            rows.append({column: pairs.get(key, "") for key, column in FIELDS.items()})
    return rows
