"""Other processes on a campaign's devices: named before any cell runs, then refused
(``--other-processes refuse``, the default) or kept as a condition of the campaign's
measurements (``record``: campaign.json's ``device_processes``).

A process that shares the device shares its clocks, memory bandwidth and power: its
timings are not those of an idle device. zl's device lock keeps zl's own cells apart;
this asks the vendor's tool (``zl_device_processes``) about everyone else's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import DeviceBusyError
from zl_core.plugins.host import PluginHost

log = logging.getLogger(__name__)

#: ``--other-processes`` values.
CHOICES = ("refuse", "record")


def _shown(processes: list[dict[str, str]]) -> str:
    return ", ".join(f"pid {p['pid']} {p.get('name') or '?'}"
                     + (f" ({p['used_mib']} MiB)" if p.get("used_mib") else "") for p in processes)


def other_processes(host: PluginHost, backend: Backend, devices: Sequence[str | None], *,
                    choice: str, command: str) -> dict[str, list[dict[str, str]]]:
    """The processes (other than this one) on each of ``devices``, device -> list; raises
    DeviceBusyError (exit 7) naming them unless ``choice`` is ``record``. A device whose
    tool cannot tell is passed over with a note."""
    found: dict[str, list[dict[str, str]]] = {}
    for device in devices:
        processes = host.device_processes(backend, device)
        label = "the default device" if device is None else f"device {device}"
        if processes is None:
            log.info(f"{command}: note: {backend.name} cannot list the processes on {label}; "
                     "none were checked")
            continue
        others = [p for p in processes if p["pid"] != str(os.getpid())]
        if others:
            found[label.removeprefix("device ")] = others
    if not found:
        return found
    said = "; ".join(f"{'device ' if d != 'the default device' else ''}{d}: {_shown(p)}"
                     for d, p in found.items())
    if choice != "record":
        raise DeviceBusyError(f"another process uses the device ({said}); its work would "
                              "be timed with this campaign's. Wait for it, pick another device, or "
                              "run anyway with --other-processes record (campaign.json keeps them as "
                              "a condition)")
    log.warning(f"{command}: another process uses the device ({said}); running anyway "
                "(--other-processes record): campaign.json keeps them (device_processes)")
    return found
