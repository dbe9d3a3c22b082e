"""One operator's IR change in a few lines: what all its changed variants have in common.

Per-variant details (``instrShape [16, 128, 16] -> [16, 8]``) depend on the tile
config; the operator line keeps the parts a reviewer scans for (ops gone and
new, layout parameters that moved the same way everywhere) and counts variants.
"""

from __future__ import annotations

import re

from zl_core.interface.ttgir_layout import LAUNCH_FLOOR
from zl_core.ir.cells import CellComparison, ChangeGroup
from zl_core.ir.compare import CHANGED, NAMES_ONLY, ONLY_A, ONLY_B

_PARAM_CHANGE = re.compile(r"(\w+) (\S.*?) -> (\S.*?)(?:, (?=\w+ )|$)")


def operator_lines(cmp: CellComparison) -> list[str]:
    """Summary lines for the whole operator (empty when the TTGIR is identical)."""
    if not cmp.has_ir or cmp.raw_equal:
        return []
    if cmp.canonical_equal:
        return [cmp.headline()]
    changed = [g for g in cmp.groups if g.change.status == CHANGED]
    n_changed = sum(len(g.files) for g in changed)
    out = [cmp.headline()]
    removed: dict[str, int] = {}
    added: dict[str, int] = {}
    layouts: dict[str, int] = {}
    attrs: dict[str, int] = {}
    shared = {"down": 0, "up": 0}
    for g in changed:
        weight = len(g.files)
        c = g.change
        for name, n in c.ops_removed.items():
            removed[name] = removed.get(name, 0) + n * weight
        for name, n in c.ops_added.items():
            added[name] = added.get(name, 0) + n * weight
        for line in c.layouts:
            for part in _layout_parts(line):
                layouts[part] = layouts.get(part, 0) + weight
        for key, (a, b) in c.attrs.items():
            text = f"{key} {a} -> {b}"
            attrs[text] = attrs.get(text, 0) + weight
        a, b = c.shared_bytes
        if a != b:
            shared["down" if b < a else "up"] += weight
    if removed:
        out.append("ops removed: " + ", ".join(f"{k} x{v}" for k, v in removed.items()))
    if added:
        out.append("ops added: " + ", ".join(f"{k} x{v}" for k, v in added.items()))
    everywhere = [t for t, n in layouts.items() if n == n_changed]
    out += [f"layout {text} ({_of(n_changed, n_changed)})" for text in everywhere]
    varying = dict.fromkeys(_param_name(t) for t, n in layouts.items() if n != n_changed)
    if varying:
        out.append("layout changes that depend on the config: " + ", ".join(varying))
    for text, n in attrs.items():
        out.append(f"{text} ({_of(n, n_changed)})")
    if shared["down"] or shared["up"]:
        out.append(f"shared memory (local_alloc): less in {shared['down']}, more in "
                   f"{shared['up']} of {n_changed} changed variant(s)")
    out += _convert_lines(changed)
    one_sided = [g for g in cmp.groups if g.change.status in (ONLY_A, ONLY_B)]
    for g in one_sided:
        out.append(f"{g.kernel}: {len(g.files)} variant(s) {g.lines[0]}")
    names = sum(len(g.files) for g in cmp.groups if g.change.status == NAMES_ONLY)
    if names:
        out.append(f"{names} more variant(s) differ in names and source locations only")
    return out


def _convert_lines(changed: list[ChangeGroup]) -> list[str]:
    """convert_layout in the changed variants the timer measured, and in all of them
    when variants launched at most the floor (input construction) changed too."""
    def converts(side: int, measured_only: bool) -> int:
        return sum(g.change.convert_layouts[side]
                   * (len(g.files) - (len(g.unmeasured) if measured_only else 0)) for g in changed)

    scoped = (converts(0, True), converts(1, True))
    every = (converts(0, False), converts(1, False))
    left_out = sum(len(g.unmeasured) for g in changed)
    if not left_out:
        return [f"convert_layout in changed variants: {every[0]} -> {every[1]}"]
    kernels = ", ".join(dict.fromkeys(g.kernel for g in changed if g.unmeasured))
    return [f"convert_layout in changed measured variants: {scoped[0]} -> {scoped[1]}",
            (f"convert_layout in all changed variants: {every[0]} -> {every[1]} ({left_out} "
            f"variant(s) launched at most {LAUNCH_FLOOR} times left out: {kernels})")]


def _of(n: int, total: int) -> str:
    return f"{n} of {total} variant(s)" if total else f"{n} variant(s)"


def _layout_parts(line: str) -> list[str]:
    """``nvidia_mma: versionMajor 3 -> 2, warpsPerCTA ...`` -> one entry per parameter that
    moved (the kind kept); an alias change keeps kinds only (``#shared: nvmma_shared ->
    swizzled_shared``)."""
    head, _, rest = line.partition(": ")
    if head.startswith("#"):
        a, _, b = rest.partition(" -> ")
        return [f"{head}: {a.split('<', 1)[0]} -> {b.split('<', 1)[0]}"]
    if head.startswith(("removed", "added")):
        return [line.split(" = ", 1)[0] + " = " + line.split(" = ", 1)[-1].split("<", 1)[0]]
    return [f"{head} {name} {a} -> {b}" for name, a, b in _PARAM_CHANGE.findall(rest)]


def _param_name(text: str) -> str:
    """``nvidia_mma instrShape [16, 64, 16] -> [16, 8]`` -> ``nvidia_mma instrShape``."""
    if text.startswith("#"):
        return text.split(":", 1)[0]
    return " ".join(text.split(" ")[:2])
