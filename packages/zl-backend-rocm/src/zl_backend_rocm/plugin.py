"""The ROCm backend: AMD GPUs through ROCm PyTorch, described to zl through its hooks.

Every hook answers for ``rocm`` only and returns None for any other backend.

Visibility. ROCm has two mask layers that compose: ROCR_VISIBLE_DEVICES is applied
first by the ROCr runtime, then HIP_VISIBLE_DEVICES (which HIP also accepts under
the name CUDA_VISIBLE_DEVICES) indexes the devices that survived. Writing one
index into both layers selects nothing (ROCR=3 leaves one device, numbered 0, and
HIP=3 then points past it). So a cell gets HIP_VISIBLE_DEVICES and, with the same
value, CUDA_VISIBLE_DEVICES -- ROCm torch reads either, and a stale
CUDA_VISIBLE_DEVICES from the parent must not narrow the child differently -- while
a ROCR_VISIBLE_DEVICES set by the user or the job scheduler is left in place as the
outer mask, and device indices are counted inside it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from zl_core import Backend, hookimpl
from zl_core.foundation.backend import TargetGrammar
from zl_core.foundation.vendor_tools import answers_for, classify_by_markers, run_tool

BACKEND = Backend(
    name="rocm",
    aliases=("amd", "hip"),
    visibility_env_keys=("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"),
    torch_namespace="cuda",  # ROCm builds of torch expose the HIP runtime as torch.cuda
    vendor="amd",
    # PyTorch implements torch.cuda.CUDAGraph on hipGraph for ROCm (upstreamed in
    # pytorch#88202, tested on ROCm 5.3), and Triton's do_bench_cudagraph uses just
    # that API. A capture that fails anyway falls back per row and is marked.
    graph_capture=True,
    # No switch declared. FlagTree's default build compiles the RLC enhancement in
    # for NVIDIA and AMD alike, but the runtime switch FLAGTREE_RLC_ENHANCE has only
    # been seen read on the NVIDIA path, and the vendor backends that do read one
    # (MUSA, HCU, PPU, MetaX) each read their own, in their own compiler.py. Until
    # the AMD path is confirmed, `zl screen` on ROCm needs an explicit --switch.
    default_switch="",
    # Triton's "hip" compiler backend takes the gfx architecture name; AMD wavefronts
    # are 64 wide. No default: a plain --compile-only keeps meaning one target.
    compile_targets=TargetGrammar(kind="hip", arch=r"gfx[0-9a-z]+", warp_size=64,
                                  usage="hip:<gfx arch>", examples=("hip:gfx942",)),
    description="AMD GPUs (ROCm/HIP)",
)

SMI = "rocm-smi"
TOOL_TIMEOUT_S = 15
TELEMETRY_FLAGS = ["--showtemp", "--showpower", "--showclocks", "--showuse", "--json"]
OUTER_MASK = "ROCR_VISIBLE_DEVICES"

# ROCm torch reports HIP errors as "HIP error: <hipGetErrorString text>", followed by
# the generic footer ("HIP kernel errors might be asynchronously reported ...",
# "Compile with `TORCH_USE_HIP_DSA` ..."), which is never matched.
FATAL_MARKERS = (
    "hip error: an illegal memory access",
    "hiperrorillegaladdress",
    "device-side assert triggered",
    "out of memory",
)

_CARD = re.compile(r"^card(\d+)$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _cards(raw: str) -> list[tuple[str, dict[str, Any]]]:
    """(index, fields) per "cardN" object of a ``rocm-smi --json`` report, by index.

    rocm-smi may print warnings before the JSON; the "system" object is skipped.
    """
    start = raw.find("{")
    if start < 0:
        return []
    try:
        report = json.loads(raw[start:])
    except ValueError:  # safe: no devices from the tool (zl then asks torch), telemetry the core names
        return []
    if not isinstance(report, dict):
        return []
    cards = []
    for key, fields in report.items():
        match = _CARD.match(str(key))
        if match and isinstance(fields, dict):
            cards.append((match.group(1), fields))
    return sorted(cards, key=lambda c: int(c[0]))


def _field(fields: dict[str, Any], *names: str) -> str:
    """The first of ``names`` present with a value, matched case-insensitively
    (ROCm 6.0 says "Card series", 6.1 "Card Series"); "N/A" counts as absent."""
    lowered = {str(k).strip().lower(): v for k, v in fields.items()}
    for name in names:
        value = str(lowered.get(name.lower(), "") or "").strip()
        if value and value.upper() != "N/A":
            return value
    return ""


def _number(value: str) -> str:
    """The number in a reading: "(1500Mhz)" -> "1500", "53.0" -> "53.0", "N/A" -> ""."""
    match = _NUMBER.search(value)
    return match.group(0) if match else ""


@hookimpl
def zl_backends() -> list[Backend]:
    return [BACKEND]


@hookimpl
@answers_for(BACKEND)
def zl_enumerate_devices(backend: Backend) -> list[str] | None:
    outer = [d for d in os.environ.get(OUTER_MASK, "").split(",") if d.strip()]
    if outer:
        # Inside the ROCr mask the survivors are numbered from 0.
        return [str(i) for i in range(len(outer))]
    out = run_tool([SMI, "--showproductname", "--json"], TOOL_TIMEOUT_S)
    cards = _cards(out) if out else []
    # rocm-smi numbers cards in its own order; only their count is used here.
    return [str(i) for i in range(len(cards))] or None


@hookimpl
@answers_for(BACKEND)
def zl_device_identity(backend: Backend, device: str | None) -> dict[str, str] | None:
    out = run_tool([SMI, "--showproductname", "--showuniqueid", "--json", "-d", str(device or 0)],
                   TOOL_TIMEOUT_S)
    cards = _cards(out) if out else []
    if not cards:
        return None
    fields = cards[0][1]
    identity = {
        "device_name": _field(fields, "Card Series", "Device Name", "Card Model"),
        "device_arch": _field(fields, "GFX Version"),
        "device_uuid": _field(fields, "Unique ID"),
    }
    return {k: v for k, v in identity.items() if v} or None


@hookimpl
@answers_for(BACKEND)
def zl_classify_capture_error(backend: Backend, exc: BaseException) -> str | None:
    # No HIP wording is known to poison the context; unknown means recoverable.
    return classify_by_markers(exc, FATAL_MARKERS)


@hookimpl
@answers_for(BACKEND)
def zl_telemetry_command(backend: Backend, device: str | None) -> list[str] | None:
    argv = [SMI, *TELEMETRY_FLAGS]
    return [*argv, "-d", str(device)] if device not in (None, "") else argv


@hookimpl
@answers_for(BACKEND)
def zl_parse_telemetry(backend: Backend, raw: str) -> list[dict[str, str]] | None:
    rows = []
    for index, fields in _cards(raw):
        rows.append({
            "index": index,
            "sm_clock_mhz": _number(_field(fields, "sclk clock speed:")),
            "mem_clock_mhz": _number(_field(fields, "mclk clock speed:")),
            # MI300-class cards have no edge sensor; junction is what they report.
            "temp_c": _number(_field(fields, "Temperature (Sensor edge) (C)",
                                     "Temperature (Sensor junction) (C)")),
            # Older cards report an average, MI300-class and newer ROCm a current
            # socket reading; either is the package power.
            "power_w": _number(_field(fields, "Current Socket Graphics Package Power (W)",
                                      "Average Graphics Package Power (W)")),
            "util_pct": _number(_field(fields, "GPU use (%)")),
        })
    return rows
