"""One operator's IR change in a few lines: what all its changed variants have in common.

Per-variant details (``instrShape [16, 128, 16] -> [16, 8]``) depend on the tile
config; the operator line keeps the parts a reviewer scans for (ops gone and
new, layout parameters that moved the same way everywhere) and counts variants.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

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
    return [cmp.headline(), *_common_lines(_tally(changed), n_changed), *_convert_lines(changed),
            *_other_lines(cmp.groups)]


@attrs.define
class _Tally:
    """What the changed variants changed, each count weighted by its group's variants."""

    removed: dict[str, int] = attrs.Factory(dict)  # op name -> occurrences
    added: dict[str, int] = attrs.Factory(dict)
    layouts: dict[str, int] = attrs.Factory(dict)  # one layout parameter's move -> variants
    attributes: dict[str, int] = attrs.Factory(dict)  # "key a -> b" -> variants
    shared_less: int = 0  # variants with less shared memory (local_alloc)
    shared_more: int = 0


def _add(counts: dict[str, int], key: str, n: int) -> None:
    counts[key] = counts.get(key, 0) + n


def _tally(changed: list[ChangeGroup]) -> _Tally:
    tally = _Tally()
    for g in changed:
        weight = len(g.files)
        c = g.change
        for name, n in c.ops_removed.items():
            _add(tally.removed, name, n * weight)
        for name, n in c.ops_added.items():
            _add(tally.added, name, n * weight)
        for line in c.layouts:
            for part in _layout_parts(line):
                _add(tally.layouts, part, weight)
        for key, (was, now) in c.attrs.items():
            _add(tally.attributes, f"{key} {was} -> {now}", weight)
        a, b = c.shared_bytes
        if a != b:
            if b < a:
                tally.shared_less += weight
            else:
                tally.shared_more += weight
    return tally


def _common_lines(tally: _Tally, n_changed: int) -> list[str]:
    """Ops gone and new, layout parameters that moved the same way in every changed variant
    (the rest named only), attributes and shared memory, each with its count."""
    out = []
    if tally.removed:
        out.append("ops removed: " + ", ".join(f"{k} x{v}" for k, v in tally.removed.items()))
    if tally.added:
        out.append("ops added: " + ", ".join(f"{k} x{v}" for k, v in tally.added.items()))
    everywhere = [t for t, n in tally.layouts.items() if n == n_changed]
    out += [f"layout {text} ({_of(n_changed, n_changed)})" for text in everywhere]
    varying = dict.fromkeys(_param_name(t) for t, n in tally.layouts.items() if n != n_changed)
    if varying:
        out.append("layout changes that depend on the config: " + ", ".join(varying))
    out += [f"{text} ({_of(n, n_changed)})" for text, n in tally.attributes.items()]
    if tally.shared_less or tally.shared_more:
        out.append(f"shared memory (local_alloc): less in {tally.shared_less}, more in "
                   f"{tally.shared_more} of {n_changed} changed variant(s)")
    return out


def _other_lines(groups: Sequence[ChangeGroup]) -> list[str]:
    """The variants only one side has, and a count of those that differ in names only."""
    out = [f"{g.kernel}: {len(g.files)} variant(s) {g.lines[0]}"
           for g in groups if g.change.status in (ONLY_A, ONLY_B)]
    names = sum(len(g.files) for g in groups if g.change.status == NAMES_ONLY)
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
