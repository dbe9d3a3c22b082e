"""The caller's device mask (``CUDA_VISIBLE_DEVICES`` and its kin), read as the vendor's
runtime reads it and refused where a campaign would otherwise measure the wrong device.

A set but empty mask hides every device: the runtime then sees none, so zl must not time
"device 0" either. An entry the runtime cannot read (``abc``, ``-1``) ends the list for
CUDA and its kin (every device after it is hidden), and an index beyond the machine's
devices selects nothing; zl names either instead of choosing what to measure. Which forms
an entry may take (an index, a ``GPU-`` UUID, ...) is the backend's knowledge
(:attr:`~zl_core.foundation.backend.Backend.visible_id`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

import attrs

from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import NoDeviceError, UsageError


@attrs.frozen
class Mask:
    key: str  # the variable that set it
    value: str  # as the caller set it
    ids: tuple[str, ...]


def read_mask(backend: Backend, environ: Mapping[str, str] | None = None) -> Mask | None:
    """The backend's mask from ``environ`` (the process's own by default), None when no
    variable of it is set; the first of its variables that is set decides."""
    environ = os.environ if environ is None else environ
    for key in backend.visibility_env_keys:
        value = environ.get(key)
        if value is None:
            continue
        shown = f"{key}={value!r}" if value.strip() != value or not value.strip() else f"{key}={value}"
        if not value.strip():
            raise NoDeviceError(f"{shown} hides every {backend.name} device; unset it, or list the "
                                f"devices to use ({key}=0 or {key}=0,1)")
        ids = [part.strip() for part in value.split(",")]
        for entry in ids:
            if not entry:
                raise UsageError(f"{shown} has an empty entry; list device ids separated by single "
                                 "commas")
            if not re.fullmatch(backend.visible_id, entry):
                raise UsageError(f"{shown}: {entry!r} is not {backend.visible_id_forms}; the runtime "
                                 "would hide it and every device after it. Set the variable to "
                                 "the devices to use, or unset it")
        repeated = sorted({d for d in ids if ids.count(d) > 1})
        if repeated:
            raise UsageError(f"{shown} names {', '.join(repeated)} twice; list each device once")
        return Mask(key=key, value=value, ids=tuple(ids))
    return None


def check_present(backend: Backend, mask: Mask, present: Sequence[str] | None) -> None:
    """Refuse a mask index the vendor's tool does not list (``present``; None: the tool
    has no answer, nothing to check). Other forms (UUIDs) are the runtime's to match."""
    if present is None:
        return
    missing = [d for d in mask.ids if d.isdigit() and d not in present]
    if missing:
        raise NoDeviceError(f"{mask.key}={mask.value} names {backend.name} device "
                            f"{', '.join(missing)}, which this machine does not have (its tool lists "
                            f"{', '.join(present) or 'none'}); set {mask.key} to devices it lists")
