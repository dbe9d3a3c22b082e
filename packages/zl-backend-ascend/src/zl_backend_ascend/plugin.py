"""The Ascend backend: Huawei NPUs through torch_npu, described to zl through its hooks.

Every hook answers for ``ascend`` only and returns None for any other backend.
"""

from __future__ import annotations

from zl_core import Backend, hookimpl
from zl_core.foundation.vendor_tools import answers_for, run_tool

BACKEND = Backend(
    name="ascend",
    aliases=("npu", "huawei"),
    # The CANN runtime's per-process mask, in logical device IDs; inside it the
    # devices are renumbered from 0 (IDs must be listed in ascending order).
    # ASCEND_VISIBLE_DEVICES is not declared: the Ascend Docker runtime reads it once,
    # when it mounts devices into a container, and a process setting it later
    # changes nothing.
    visibility_env_keys=("ASCEND_RT_VISIBLE_DEVICES",),
    torch_namespace="npu",
    torch_extension="torch_npu",
    vendor="ascend",
    # Not established: FlagGems times Ascend kernels with its own NPU benchmark
    # helper, and no capture-and-replay timing has been measured here.
    graph_capture=False,
    # No FlagTree RLC switch is known for Ascend; `zl screen` needs --switch.
    default_switch="",
    description="Huawei Ascend NPUs (CANN)",
)

SMI = "npu-smi"
TOOL_TIMEOUT_S = 15
# The summary table; it always covers every NPU (a per-device query needs a -t type
# whose output format is not established here).
TELEMETRY_ARGV = [SMI, "info"]


def _value(token: str) -> str:
    return "" if token.upper() in ("NA", "N/A", "-") else token


def _chips(raw: str) -> list[dict[str, str]]:
    """One dict per chip of the ``npu-smi info`` summary table, in table order.

    Each chip takes two table lines: "| <npu> <name> | <health> | <power> <temp> ..."
    then "| <chip> [<device>] | <bus-id> | <aicore%> <memory> ...". The process
    table that follows is not read.
    """
    chips: list[dict[str, str]] = []
    npu: dict[str, str] | None = None
    for line in raw.splitlines():
        if "Process id" in line:
            break
        if not line.lstrip().startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3:
            continue
        first, last = cells[0].split(), cells[2].split()
        if not first or not first[0].isdigit() or not last:
            continue  # headers ("NPU Name", "Chip Device") and the version banner
        if len(first) >= 2 and not first[1].isdigit():
            npu = {"npu": first[0], "name": first[1], "health": cells[1],
                   "power": _value(last[0]), "temp": _value(last[1]) if len(last) > 1 else ""}
        elif npu is not None:
            chip = first[0]
            chips.append({**npu, "chip": chip, "aicore": _value(last[0])})
    return chips


@hookimpl
def zl_backends() -> list[Backend]:
    return [BACKEND]


@hookimpl
@answers_for(BACKEND)
def zl_enumerate_devices(backend: Backend) -> list[str] | None:
    out = run_tool([SMI, "info"], TOOL_TIMEOUT_S)
    chips = _chips(out) if out else []
    # Logical IDs count chips from 0 (the table's NPU IDs need not start at 0).
    return [str(i) for i in range(len(chips))] or None


@hookimpl
@answers_for(BACKEND)
def zl_device_identity(backend: Backend, device: str | None) -> dict[str, str] | None:
    out = run_tool([SMI, "info"], TOOL_TIMEOUT_S)
    chips = _chips(out) if out else []
    position = int(device) if device and str(device).isdigit() else 0
    if position >= len(chips):
        return None
    return {"device_name": chips[position]["name"]}


@hookimpl
@answers_for(BACKEND)
def zl_telemetry_command(backend: Backend) -> list[str] | None:
    return list(TELEMETRY_ARGV)


@hookimpl
@answers_for(BACKEND)
def zl_parse_telemetry(backend: Backend, raw: str) -> list[dict[str, str]] | None:
    rows = []
    for chip in _chips(raw):
        # The summary table shows no clocks; those columns stay empty.
        index = chip["npu"] if chip["chip"] == "0" else f"{chip['npu']}.{chip['chip']}"
        rows.append({"index": index, "sm_clock_mhz": "", "mem_clock_mhz": "",
                     "temp_c": chip["temp"], "power_w": chip["power"],
                     "util_pct": chip["aicore"]})
    return rows
