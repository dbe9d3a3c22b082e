"""What changed between two compilations of one kernel, in words a reader can act on.

Raw equality is the screen's criterion (the fingerprint); canonical equality
(:mod:`zl_core.ir.canonical`) says whether anything but names and source
locations differs. The change lists (ops, layouts, launch attributes, shared
memory) are computed from :mod:`zl_core.ir.features` of both sides.
"""

from __future__ import annotations

from collections import Counter

import attrs

from zl_core.ir.canonical import canonical_ttgir
from zl_core.ir.features import Encoding, KernelFeatures, features

CHANGED = "changed"
SAME = "same"
NAMES_ONLY = "names_only"  # raw text differs, canonical text does not
ONLY_A = "only_a"
ONLY_B = "only_b"


@attrs.frozen(kw_only=True)
class KernelChange:
    """One kernel variant (one .ttgir file) compared between side A and side B."""

    status: str
    ops_removed: dict[str, int] = attrs.field(factory=dict)  # gone on B: count on A
    ops_added: dict[str, int] = attrs.field(factory=dict)  # new on B: count on B
    ops_count: dict[str, tuple[int, int]] = attrs.field(factory=dict)  # on both, count differs
    layouts: tuple[str, ...] = ()
    attrs: dict[str, tuple[str | None, str | None]] = attrs.field(factory=dict)
    convert_layouts: tuple[int, int] = (0, 0)
    shared_bytes: tuple[int, int] = (0, 0)
    buffers: tuple[int, int] = (0, 0)

    def lines(self) -> list[str]:
        """The change in a few lines, most telling first (empty when nothing changed)."""
        if self.status == NAMES_ONLY:
            return ["names and source locations only (canonical TTGIR identical)"]
        if self.status in (ONLY_A, ONLY_B):
            return [f"compiled on side {'A' if self.status == ONLY_A else 'B'} only"]
        out = []
        if self.ops_removed:
            out.append("ops removed: " + _counts(self.ops_removed))
        if self.ops_added:
            out.append("ops added: " + _counts(self.ops_added))
        if self.ops_count:
            out.append("op counts: " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in self.ops_count.items()))
        out += [f"layout {line}" for line in self.layouts]
        for key, (was, now) in self.attrs.items():
            out.append(f"{key}: {was if was is not None else '-'} -> {now if now is not None else '-'}")
        a, b = self.convert_layouts
        if a != b:
            out.append(f"convert_layout: {a} -> {b}")
        a, b = self.shared_bytes
        if a != b:
            out.append(f"shared memory (local_alloc): {_kib(a)} -> {_kib(b)}")
        a, b = self.buffers
        if a != b:
            out.append(f"pipeline buffers: {a or '-'} -> {b or '-'}")
        return out or ["reordered or renumbered ops only"]

    def to_json(self) -> dict:
        return {"status": self.status, "ops_removed": self.ops_removed,
                "ops_added": self.ops_added,
                "ops_count": {k: list(v) for k, v in self.ops_count.items()},
                "layouts": list(self.layouts),
                "attrs": {k: list(v) for k, v in self.attrs.items()},
                "convert_layouts": list(self.convert_layouts),
                "shared_bytes": list(self.shared_bytes), "buffers": list(self.buffers),
                "lines": self.lines()}


def _counts(ops: dict[str, int]) -> str:
    return ", ".join(f"{name} x{n}" for name, n in ops.items())


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def compare_texts(a: str | None, b: str | None) -> KernelChange:
    """Compare one kernel's TTGIR on side A and side B (None: not compiled on that side)."""
    if a is None or b is None:
        return KernelChange(status=ONLY_B if a is None else ONLY_A)
    if a == b:
        return KernelChange(status=SAME)
    if canonical_ttgir(a) == canonical_ttgir(b):
        return KernelChange(status=NAMES_ONLY)
    return _change(features(a), features(b))


def _change(fa: KernelFeatures, fb: KernelFeatures) -> KernelChange:
    names = sorted(set(fa.ops) | set(fb.ops))
    removed = {n: fa.ops[n] for n in names if n not in fb.ops}
    added = {n: fb.ops[n] for n in names if n not in fa.ops}
    counts = {n: (fa.ops[n], fb.ops[n]) for n in names
              if n in fa.ops and n in fb.ops and fa.ops[n] != fb.ops[n]}
    keys = [k for k in dict.fromkeys([*fa.attrs, *fb.attrs]) if fa.attrs.get(k) != fb.attrs.get(k)]
    return KernelChange(
        status=CHANGED, ops_removed=removed, ops_added=added, ops_count=counts,
        layouts=tuple(layout_changes(fa.encodings, fb.encodings)),
        attrs={k: (fa.attrs.get(k), fb.attrs.get(k)) for k in keys},
        convert_layouts=(fa.convert_layouts, fb.convert_layouts),
        shared_bytes=(fa.shared_bytes, fb.shared_bytes), buffers=(fa.buffers, fb.buffers))


def layout_changes(a: tuple[Encoding, ...], b: tuple[Encoding, ...]) -> list[str]:
    """Encodings that differ, paired where the pairing is unambiguous.

    Identical encodings cancel first (aliases may be renumbered around a change);
    what is left pairs by kind when each side has exactly one of that kind
    (``nvidia_mma: versionMajor 3 -> 2``), then by alias (``#shared:
    nvmma_shared<...> -> swizzled_shared<...>``); the rest is listed as removed/added.
    """
    left_a, left_b = _cancel(list(a), list(b))
    out: list[str] = []
    for kind in dict.fromkeys(e.kind for e in (*left_a, *left_b)):
        ka = [e for e in left_a if e.kind == kind]
        kb = [e for e in left_b if e.kind == kind]
        if len(ka) == 1 and len(kb) == 1:
            out.append(f"{ka[0].short_kind}: {_param_diff(ka[0], kb[0])}")
            left_a.remove(ka[0])
            left_b.remove(kb[0])
    for ea in list(left_a):
        eb = next((e for e in left_b if e.alias == ea.alias), None)
        if eb is not None:
            out.append(f"#{ea.alias}: {ea.text()} -> {eb.text()}")
            left_a.remove(ea)
            left_b.remove(eb)
    out += [f"removed #{e.alias} = {e.text()}" for e in left_a]
    out += [f"added #{e.alias} = {e.text()}" for e in left_b]
    return out


def _cancel(a: list[Encoding], b: list[Encoding]) -> tuple[list[Encoding], list[Encoding]]:
    same = Counter(e.text() for e in a) & Counter(e.text() for e in b)
    left_a: list[Encoding] = []
    left_b: list[Encoding] = []
    for side, out in ((a, left_a), (b, left_b)):
        budget = Counter(same)
        for e in side:
            if budget[e.text()]:
                budget[e.text()] -= 1
            else:
                out.append(e)
    return left_a, left_b


def _param_diff(a: Encoding, b: Encoding) -> str:
    pa, pb = dict(a.params), dict(b.params)
    parts = [f"{k} {pa.get(k, '-')} -> {pb.get(k, '-')}" for k in dict.fromkeys([*pa, *pb])
             if pa.get(k) != pb.get(k)]
    return ", ".join(parts) or "reordered parameters"
