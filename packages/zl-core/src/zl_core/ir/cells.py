"""Two cells' TTGIR dumps compared: per kernel variant, rolled up per kernel and operator.

Files pair by their path under ``ttgir/`` (``<shape>/<kernel>/<variant>.ttgir``,
:mod:`zl_core.interface.ttgir_layout`), which is what the screen's fingerprint hashes too,
so ``raw_equal`` here is the fingerprint's verdict. Variants with the same
change collapse into one group that says which shapes and configs it covers.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from pathlib import Path

import attrs

from zl_core.interface.ttgir_layout import is_measured, launch_counts, read_index
from zl_core.ir.canonical import canonical_ttgir
from zl_core.ir.compare import CHANGED, NAMES_ONLY, ONLY_A, ONLY_B, SAME, KernelChange, compare_texts
from zl_core.store.layout import CellLayout

VARIANTS_NAME = "variants.json"
#: Lines of canonical diff a report carries per changed kernel (zl diff --full has all).
REPORT_DIFF_LINES = 120
log = logging.getLogger(__name__)
_LAUNCH_IN_NAME = re.compile(r"(?:^|_)(num_warps|num_stages)=(\d+)")


@attrs.frozen(kw_only=True)
class VariantChange:
    file: str  # relative to ttgir/
    shape: str
    kernel: str
    variant: str
    change: KernelChange
    launches: int | None  # side A's launches from index.tsv (0 when only compiled)
    params: dict[str, str]  # side A's variants.json params, when written
    measured: bool = True  # launched more than the floor on side A (or not scopable)


@attrs.frozen(kw_only=True)
class ChangeGroup:
    """Variants of one kernel that changed the same way."""

    kernel: str
    lines: tuple[str, ...]
    files: tuple[str, ...]
    shapes: tuple[str, ...]
    variants: tuple[str, ...]
    of_variants: int  # variants of this kernel on side A, changed or not
    launch: tuple[str, ...]  # num_warps / num_stages as compiled (side A)
    configs: tuple[str, ...]  # autotune picks recorded for this kernel on side A
    change: KernelChange
    unmeasured: tuple[str, ...] = ()  # files of the group launched at most the floor


@attrs.frozen(kw_only=True)
class CellComparison:
    a_dir: Path
    b_dir: Path
    files_a: int
    files_b: int
    counts: dict[str, int]  # status -> files
    groups: tuple[ChangeGroup, ...]  # changed, names-only and one-sided variants

    @property
    def has_ir(self) -> bool:
        return bool(self.files_a or self.files_b)

    @property
    def raw_equal(self) -> bool | None:
        """Byte-identical dumps (the fingerprint's criterion); None without any .ttgir."""
        if not self.has_ir:
            return None
        return self.counts.get(SAME, 0) == self.files_a == self.files_b

    @property
    def canonical_equal(self) -> bool | None:
        if not self.has_ir:
            return None
        same = self.counts.get(SAME, 0) + self.counts.get(NAMES_ONLY, 0)
        return same == self.files_a == self.files_b

    def headline(self) -> str:
        """One line: what kind of change, and how much of the operator it touches."""
        if not self.has_ir:
            return "no TTGIR on either side"
        if self.raw_equal:
            return f"identical TTGIR ({self.files_a} file(s))"
        if self.canonical_equal:
            return (f"raw TTGIR differs in {self.counts.get(NAMES_ONLY, 0)} file(s), canonical "
                    "TTGIR identical: only names and source locations changed")
        kernels = sorted({g.kernel for g in self.groups if g.change.status != NAMES_ONLY})
        changed = sum(self.counts.get(s, 0) for s in (CHANGED, ONLY_A, ONLY_B))
        return (f"{changed} of {max(self.files_a, self.files_b)} variant(s) changed in "
                f"{len(kernels)} kernel(s): {', '.join(kernels)}")

    def to_json(self, *, diff_lines: int = REPORT_DIFF_LINES) -> dict:
        groups, with_diff = [], set()
        for g in self.groups:
            entry = {"kernel": g.kernel, "lines": list(g.lines), "files": list(g.files),
                     "shapes": list(g.shapes), "variants": list(g.variants),
                     "of_variants": g.of_variants, "launch": list(g.launch),
                     "configs": list(g.configs), "change": g.change.to_json(),
                     "unmeasured": list(g.unmeasured), "diff": None}
            if g.change.status == CHANGED and diff_lines and g.kernel not in with_diff:
                with_diff.add(g.kernel)  # one diff per kernel keeps a large campaign's page small
                lines = unified_diff(self.a_dir, self.b_dir, g.files[0])
                entry["diff"] = {"file": g.files[0], "lines": lines[:diff_lines],
                                 "total_lines": len(lines)}
            groups.append(entry)
        return {"raw_equal": self.raw_equal, "canonical_equal": self.canonical_equal,
                "files_a": self.files_a, "files_b": self.files_b, "counts": dict(self.counts),
                "headline": self.headline(), "groups": groups}


def _files(cell: Path) -> dict[str, Path]:
    root = CellLayout(cell).ttgir
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*.ttgir")) if p.is_file()}


def _read(path: Path | None) -> str | None:
    return None if path is None else path.read_text(encoding="utf-8", errors="replace")


def compare_cells(a_dir: Path, b_dir: Path) -> CellComparison:
    """Compare every ``.ttgir`` of two cells and group the changes per kernel."""
    a_files, b_files = _files(a_dir), _files(b_dir)
    index = read_index(CellLayout(a_dir).ttgir)
    launches = {r.file: r.launches for r in index}
    scope = launch_counts(CellLayout(a_dir).ttgir)
    params = _variant_params(Path(a_dir))
    variants: list[VariantChange] = []
    for rel in sorted(set(a_files) | set(b_files)):
        shape, kernel, variant = _parts(rel)
        variants.append(VariantChange(
            file=rel, shape=shape, kernel=kernel, variant=variant,
            change=compare_texts(_read(a_files.get(rel)), _read(b_files.get(rel))),
            launches=launches.get(rel), params=params.get(rel, {}),
            measured=is_measured(rel, scope)))
    counts: dict[str, int] = {}
    for v in variants:
        counts[v.change.status] = counts.get(v.change.status, 0) + 1
    configs = _recorded_configs(Path(a_dir))
    per_kernel: dict[str, int] = {}
    for rel in a_files:
        per_kernel[_parts(rel)[1]] = per_kernel.get(_parts(rel)[1], 0) + 1
    grouped: dict[tuple, list[VariantChange]] = {}
    for v in variants:
        if v.change.status != SAME:
            grouped.setdefault((v.kernel, tuple(v.change.lines())), []).append(v)
    groups = [
        ChangeGroup(kernel=kernel, lines=lines, files=tuple(m.file for m in members),
                    shapes=tuple(dict.fromkeys(m.shape for m in members)),
                    variants=tuple(dict.fromkeys(m.variant for m in members)),
                    of_variants=per_kernel.get(kernel, 0),
                    launch=tuple(dict.fromkeys(_launch(m) for m in members if _launch(m))),
                    configs=tuple(configs.get(kernel, ())), change=members[0].change,
                    unmeasured=tuple(m.file for m in members if not m.measured))
        for (kernel, lines), members in grouped.items()]
    order = {CHANGED: 0, ONLY_A: 1, ONLY_B: 1, NAMES_ONLY: 2}
    groups.sort(key=lambda g: (order.get(g.change.status, 3), g.kernel, -len(g.files)))
    return CellComparison(a_dir=Path(a_dir), b_dir=Path(b_dir), files_a=len(a_files),
                          files_b=len(b_files), counts=counts, groups=tuple(groups))


def _parts(rel: str) -> tuple[str, str, str]:
    parts = rel[: -len(".ttgir")].split("/")
    if len(parts) >= 3:
        return parts[0], parts[1], "/".join(parts[2:])
    return ("-", parts[0], parts[-1]) if len(parts) == 2 else ("-", parts[0], "default")


def _launch(v: VariantChange) -> str:
    """num_warps / num_stages as compiled: variants.json, else the variant's name."""
    found = dict(_LAUNCH_IN_NAME.findall(v.variant))
    found.update({k: v.params[k] for k in ("num_warps", "num_stages") if v.params.get(k)})
    return " ".join(f"{k}={found[k]}" for k in ("num_warps", "num_stages") if k in found)


def _variant_params(cell: Path) -> dict[str, dict[str, str]]:
    path = CellLayout(cell).ttgir / VARIANTS_NAME
    if not path.exists():
        return {}  # a provider that writes no variants.json: names carry what is known
    data = _json(path, "the kernel variants' launch parameters")
    if not isinstance(data, dict):
        return {}
    return {str(k): {str(p): str(x) for p, x in (v.get("params") or {}).items()}
            for k, v in data.items() if isinstance(v, dict)}


def _recorded_configs(cell: Path) -> dict[str, list[str]]:
    """Autotune picks by kernel name from the cell's records: ``key -> config`` lines."""
    out: dict[str, list[str]] = {}
    for path in sorted(CellLayout(cell).autotune_records.glob("*.json")):
        data = _json(path, "its autotune picks")
        if not isinstance(data, dict) or "entries" not in data:
            continue
        kernel = str(data.get("kernel", ""))
        for entry in data.get("entries") or []:
            if isinstance(entry, dict) and isinstance(entry.get("config"), dict):
                out.setdefault(kernel, []).append(f"{_key(entry.get('key'))} -> "
                                                  f"{config_text(entry['config'])}")
    return out


def _json(path: Path, what: str) -> object:
    """The JSON in ``path``; None, with a warning naming the file, when it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning(f"{path} cannot be read ({' '.join(str(exc).split())[:120]}): the IR "
                    f"comparison goes on without {what}; re-run that cell to write it again")
        return None


def _key(key: object) -> str:
    try:
        parts = json.loads(str(key))
    except ValueError:
        return str(key)
    shown = []
    for p in parts if isinstance(parts, list) else [parts]:
        if isinstance(p, dict) and len(p) == 1:
            p = next(iter(p.values()))
        shown.append(str(p))
    return "(" + ", ".join(shown) + ")"


def config_text(config: dict) -> str:
    """``BLOCK_M=128 BLOCK_N=64 num_warps=4 num_stages=3`` from a recorded config."""
    kwargs = config.get("kwargs") or {}
    parts = [f"{k}={v}" for k, v in kwargs.items()]
    parts += [f"{k}={config[k]}" for k in ("num_warps", "num_stages", "num_ctas", "maxnreg")
              if config.get(k) is not None]
    return " ".join(parts)


def unified_diff(a_dir: Path, b_dir: Path, rel: str, *, context: int = 3) -> list[str]:
    """The canonical unified diff of one file between two cells (empty when equal)."""
    a = _read(_files(a_dir).get(rel))
    b = _read(_files(b_dir).get(rel))
    ca = canonical_ttgir(a).splitlines() if a is not None else []
    cb = canonical_ttgir(b).splitlines() if b is not None else []
    return list(difflib.unified_diff(ca, cb, fromfile=f"A/{rel}", tofile=f"B/{rel}",
                                     lineterm="", n=context))
