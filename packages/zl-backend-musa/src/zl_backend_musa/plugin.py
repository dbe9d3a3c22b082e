"""The MUSA backend: Moore Threads GPUs through torch_musa, described to zl through its hooks.

Every hook answers for ``musa`` only and returns None for any other backend.
"""

from __future__ import annotations

import json
import re
from typing import Any

from zl_core import Backend, hookimpl
from zl_core.foundation.compiler_env import CompilerEnv
from zl_core.foundation.vendor_tools import answers_for, classify_by_markers, run_tool

BACKEND = Backend(
    name="musa",
    aliases=("mthreads", "moore", "mt"),
    visibility_env_keys=("MUSA_VISIBLE_DEVICES",),
    torch_namespace="musa",
    torch_extension="torch_musa",
    # FlagGems calls this vendor "mthreads" (runtime/backend/_mthreads); "musa" there
    # would make every _mthreads module look foreign.
    vendor="mthreads",
    # torch_musa provides Stream, Event, synchronize, graph and MUSAGraph; capture
    # was measured working on an S5000 (most operators captured, a few fell back).
    graph_capture=True,
    # Pytest function names minus "test_". On an S5000, capturing unique2 fell back
    # twice and then raised "MUSA error: unknown error", leaving no rows at all:
    # for it the attempt is the damage, so it is never attempted.
    capture_deny=frozenset({"unique2"}),
    default_switch="FLAGTREE_MUSA_RLC_ENHANCE",
    # Its family (FLAGTREE_MUSA_RLC_PHASE_MASK, ..._PROFITABILITY_POLICY, ...): the seed
    # harness scrubbed FLAGTREE_*RLC* and DISABLE_LLVM_OPT from what its cells inherited.
    compiler_env=CompilerEnv(families=(("FLAGTREE_*RLC*", "DISABLE_LLVM_OPT"),)),
    description="Moore Threads GPUs (MUSA)",
)

GMI = "mthreads-gmi"
TOOL_TIMEOUT_S = 15
# mthreads-gmi has no CSV query mode; its JSON report is the machine-readable form.
QUERY = ["-q", "-d", "TEMPERATURE,CLOCK,POWER,UTILIZATION", "--json"]

# MUSA's own wording; none of the CUDA texts ever appear on this runtime. Matched as
# lower-case substrings of "<ExcType>: <message>", fatal first.
FATAL_MARKERS = (
    "musa error: an illegal memory access",
    "device-side assert triggered",
    "misaligned address",
    "uncorrectable ecc",
    "out of memory",
)
# Observed on an S5000: after this error in a capture the fallback still ran, and
# the process then died in teardown with zero rows -- the context was gone.
POISONED_MARKERS = ("musa error: unknown error",)

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def _gpus(raw: str) -> list[dict[str, Any]]:
    """The per-GPU objects of an ``mthreads-gmi -q --json`` report ([] if unreadable).

    "GPU" is a list (one object per device); it is tolerated as a single object too.
    """
    start = raw.find("{")
    if start < 0:
        return []
    try:
        report = json.loads(raw[start:])
    except ValueError:  # safe: no devices from the tool (zl then asks torch), telemetry the core names
        return []
    gpus = report.get("GPU") if isinstance(report, dict) else None
    if isinstance(gpus, dict):
        gpus = [gpus]
    return [g for g in gpus or () if isinstance(g, dict)]


def _number(value: Any) -> str:
    """The leading number of a value with its unit glued on ("1888MHz" -> "1888")."""
    match = _NUMBER.match(str(value or ""))
    return match.group(1) if match else ""


def _section(gpu: dict[str, Any], name: str) -> dict[str, Any]:
    value = gpu.get(name)
    return value if isinstance(value, dict) else {}


def _power_draw(readings: dict[str, Any]) -> Any:
    # The real key is "Power Draw " with a trailing space: compare stripped keys.
    return next((v for k, v in readings.items() if k.strip() == "Power Draw"), "")


@hookimpl
def zl_backends() -> list[Backend]:
    return [BACKEND]


@hookimpl
@answers_for(BACKEND)
def zl_enumerate_devices(backend: Backend) -> list[str] | None:
    out = run_tool([GMI, *QUERY], TOOL_TIMEOUT_S)
    if out is None:
        return None
    indices = [str(g.get("Index", "")).strip() for g in _gpus(out)]
    indices = [i for i in indices if i.isdigit()]
    return indices or None


@hookimpl
@answers_for(BACKEND)
def zl_classify_capture_error(backend: Backend, exc: BaseException) -> str | None:
    return classify_by_markers(exc, FATAL_MARKERS, POISONED_MARKERS)


@hookimpl
@answers_for(BACKEND)
def zl_telemetry_command(backend: Backend, device: str | None) -> list[str] | None:
    # Without -i the report covers every device; a bare trailing -i would fail.
    return [GMI, *QUERY, "-i", str(device)] if device not in (None, "") else [GMI, *QUERY]


@hookimpl
@answers_for(BACKEND)
def zl_parse_telemetry(backend: Backend, raw: str) -> list[dict[str, str]] | None:
    rows = []
    for gpu in _gpus(raw):
        clocks = _section(gpu, "Clocks")
        rows.append({
            "index": str(gpu.get("Index", "")).strip(),
            "sm_clock_mhz": _number(clocks.get("Graphics")),
            "mem_clock_mhz": _number(clocks.get("Memory")),
            "temp_c": _number(_section(gpu, "Temperature").get("GPU Current Temp")),
            "power_w": _number(_power_draw(_section(gpu, "Power Readings"))),
            "util_pct": _number(_section(gpu, "Utilization").get("Gpu")),
        })
    return rows


#: Loaded before zl's plugins in every MUSA cell (see the module's docstring).
COMPAT_PLUGINS = ["zl_backend_musa.flaggems_compat"]


@hookimpl
@answers_for(BACKEND)
def zl_compat_plugins(backend: Backend) -> list[str] | None:
    return list(COMPAT_PLUGINS)
