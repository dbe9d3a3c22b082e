"""What a reader asks of one TTGIR module: its ops, layouts, launch attributes, shared memory.

TTGIR is Triton's own output on every backend, so this parses Triton's printed
form only; dialect prefixes (``ttg``, ``ttng``, ``amdgpu``...) are kept as printed
and never interpreted. Shared memory is what the module's ``ttg.local_alloc``
ops ask for (shape x element size), before the allocator overlaps buffers: an
upper bound that moves with the number of pipeline buffers and tile sizes.
"""

from __future__ import annotations

import re
from collections import Counter

import attrs

from zl_core.ir.canonical import strip_locations

_OP = re.compile(r'^\s*(?:%[^=]+=\s*)?"?((?:[a-z_]\w*\.)+[a-z_]\w*)"?(?=[\s(<{:]|$)')
_ENCODING = re.compile(r"^#(\w+)\s*=\s*#([\w.]+)<\{(.*)\}>\s*$")
_MODULE_ATTRS = re.compile(r"^module attributes \{(.*)\}\s*\{\s*$")
_ATTR = re.compile(r'"?([\w.\-]+)"?\s*=\s*("[^"]*"|[^,]+?)(?:\s*:\s*\w+)?\s*(?:,|$)')
_ALLOC = re.compile(r"ttg\.local_alloc\b.*?->\s*!ttg\.memdesc<([0-9x]+)x([a-zA-Z]\w*)")
_PARAM = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|[^,]+)")
_BITS = re.compile(r"(\d+)")
#: Module attributes shown by name (as printed, without the dialect prefix).
LAUNCH_ATTRS = ("num-warps", "num-ctas", "threads-per-warp", "shared", "total-num-warps")


@attrs.frozen(kw_only=True)
class Encoding:
    alias: str  # "mma", "blocked1"
    kind: str  # "ttg.nvidia_mma"
    params: tuple[tuple[str, str], ...]  # as printed, in order

    @property
    def short_kind(self) -> str:
        return self.kind.rsplit(".", 1)[-1]

    def text(self) -> str:
        return f"{self.short_kind}<{', '.join(f'{k} = {v}' for k, v in self.params)}>"


@attrs.frozen(kw_only=True)
class KernelFeatures:
    ops: dict[str, int]  # op name -> occurrences
    encodings: tuple[Encoding, ...]
    attrs: dict[str, str]  # launch attributes of the module (num-warps, ...)
    convert_layouts: int
    shared_bytes: int  # sum over ttg.local_alloc buffers
    buffers: int  # largest leading dimension of a multi-buffered alloc (pipeline depth), 0 if none
    functions: tuple[str, ...]


def element_bytes(dtype: str) -> float:
    """Bytes per element of an MLIR element type (i1 counted as a byte, as stored)."""
    if dtype == "i1":
        return 1
    m = _BITS.search(dtype)
    if dtype.startswith(("f8", "f4")) or not m:
        return 0.5 if dtype.startswith("f4") else 1
    bits = int(m.group(1))
    return max(bits, 8) / 8


def features(text: str) -> KernelFeatures:
    ops: Counter[str] = Counter()
    encodings: list[Encoding] = []
    module_attrs: dict[str, str] = {}
    shared = 0.0
    buffers = 0
    functions: list[str] = []
    for line in strip_locations(text).splitlines():
        enc = _ENCODING.match(line)
        if enc:
            params = tuple((k, v.strip()) for k, v in _PARAM.findall(enc.group(3)))
            encodings.append(Encoding(alias=enc.group(1), kind=enc.group(2), params=params))
            continue
        mod = _MODULE_ATTRS.match(line)
        if mod:
            for key, value in _ATTR.findall(mod.group(1)):
                name = key.split(".", 1)[-1] if "." in key else key
                module_attrs[name] = value.strip().strip('"')
            continue
        op = _OP.match(line)
        if op:
            ops[op.group(1)] += 1
            if op.group(1) == "tt.func":
                fn = re.search(r'@("[^"]*"|[\w$.\-]+)', line)
                if fn:
                    functions.append(fn.group(1).strip('"'))
        alloc = _ALLOC.search(line)
        if alloc:
            dims = [int(d) for d in alloc.group(1).split("x") if d]
            size = 1
            for d in dims:
                size *= d
            shared += size * element_bytes(alloc.group(2))
            if len(dims) >= 3:
                buffers = max(buffers, dims[0])
    launch = {k: module_attrs[k] for k in LAUNCH_ATTRS if k in module_attrs}
    if "target" in module_attrs:
        launch["target"] = module_attrs["target"]
    return KernelFeatures(ops=dict(sorted(ops.items())), encodings=tuple(encodings), attrs=launch,
                          convert_layouts=ops.get("ttg.convert_layout", 0)
                          + ops.get("triton_gpu.convert_layout", 0),
                          shared_bytes=int(shared), buffers=buffers, functions=tuple(functions))
