"""A compiled TTGIR variant and its name: what tells the variants of one kernel apart.

Filled by :class:`zl_flaggems.cell.ttgir_recorder.TtgirRecorder` from Triton's
compilation listener and kernel-load hook; names come from the values that
differ within one (shape, kernel) group, so both sides of a pair (same pinned
configs, different switch, hence different hashes) get the same file names.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from zl_core.interface.ttgir_layout import variant_names

OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


@attrs.define(kw_only=True)
class Variant:
    """One compiled kernel (one Triton cache hash)."""

    hash: str
    kernel: str
    ttgir: str | None
    params: dict[str, str]  # what may name it: constexprs, launch options, signature summary
    seq: int  # order of first compilation, the last tie-breaker for names
    first_shape: str


def _short(value: Any) -> str:
    inner = getattr(value, "value", value)  # tl.constexpr wraps its value
    return repr(inner) if isinstance(inner, float) else str(inner)


def _param_name(path: Any, arg_names: list[str]) -> str:
    if isinstance(path, str):
        return path
    if isinstance(path, tuple) and path and isinstance(path[0], int) and path[0] < len(arg_names):
        rest = "".join(f"[{p}]" for p in path[1:])
        return f"{arg_names[path[0]]}{rest}"
    return str(path)


def variant_params(src: Any, metadata: Mapping[str, Any]) -> dict[str, str]:
    """The values that may tell variants of one kernel apart, as strings.

    Only those that differ within a (shape, kernel) group end up in a name
    (:func:`zl_core.interface.ttgir_layout.variant_names`), so listing more costs nothing.
    """
    out: dict[str, str] = {}
    fn = getattr(src, "fn", None)
    arg_names = list(getattr(fn, "arg_names", None) or [])
    constants = getattr(src, "constants", None) or {}
    for path, value in sorted(constants.items(), key=lambda kv: str(kv[0])):
        out[_param_name(path, arg_names)] = _short(value)
    for key in OPTION_KEYS:
        if metadata.get(key) is not None:
            out[key] = _short(metadata[key])
    signature = getattr(src, "signature", None) or {}
    pointers: list[str] = []
    scalars: list[str] = []
    for ty in signature.values():
        ty = str(ty)
        if ty == "constexpr":
            continue
        if ty.startswith("*"):
            if ty[1:] not in pointers:
                pointers.append(ty[1:])
        else:
            scalars.append(ty)
    if pointers:
        out["sig.ptr"] = "+".join(pointers)
    if scalars:
        out["sig.scalar"] = "+".join(scalars)
    attrs_ = getattr(src, "attrs", None)
    if attrs_:
        spec = repr(sorted((str(k), repr(v)) for k, v in attrs_.items()))
        out["spec"] = hashlib.sha1(spec.encode()).hexdigest()[:8]
    return out


def _read_ttgir(metadata_group: Mapping[str, str], name: str) -> str | None:
    path = metadata_group.get(f"{name}.ttgir")
    if path is None:
        path = next((p for k, p in metadata_group.items() if str(k).endswith(".ttgir")), None)
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return None


def _options_from_json(metadata_group: Mapping[str, str]) -> dict:
    path = next((p for k, p in metadata_group.items() if str(k).endswith(".json")), None)
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}


#: Naming parameters used only when constexprs and launch options leave a tie
#: (same config, different argument dtypes or alignment specialisation).
TIE_BREAKERS = ("sig.ptr", "sig.scalar", "spec")


def _named(members: list[tuple[Variant, int]]) -> list[tuple[tuple[Variant, int], str]]:
    """Readable, stable names for the variants of one (shape, kernel) group.

    Names come from the constexprs and launch options that differ within the
    group; signature-derived keys join only if those leave two variants alike
    (TMA descriptors, for one, repeat the block sizes in the signature). Sorting
    by the naming parameters first gives both sides of a pair (same pinned
    configs, different switch, hence different hashes) the same names.
    """
    ordered = sorted(members, key=lambda m: (json.dumps(m[0].params, sort_keys=True), m[0].seq))
    params = [m[0].params for m in ordered]
    chosen: list[Mapping[str, object]] = []
    for drop in (TIE_BREAKERS, TIE_BREAKERS[2:], ()):
        chosen = [{k: v for k, v in p.items() if k not in drop} for p in params]
        if len({json.dumps(c, sort_keys=True) for c in chosen}) == len(chosen):
            break
    return list(zip(ordered, variant_names(chosen), strict=True))
