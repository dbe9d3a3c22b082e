"""The on-disk layout of a cell's TTGIR dump, and the fingerprint over it.

    <cell>/ttgir/<shape>/<kernel>/<variant>.ttgir
    <cell>/ttgir/index.tsv        shape  kernel  file  launches

Writers (the pytest plugin, the compile-only cell) and readers (screening) share
these helpers so a dump and its fingerprint can never disagree about names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from zl_core.foundation.atomic import write_text_atomic

TTGIR_DIR = "ttgir"
INDEX_NAME = "index.tsv"
INDEX_COLUMNS = ("shape", "kernel", "file", "launches")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=+-]+")
_CONVERT_LAYOUT = re.compile(r"\bttg\.convert_layout\b|\btriton_gpu\.convert_layout\b")
MAX_COMPONENT = 120


def safe_component(text: str) -> str:
    """A path component from free text: no separators, no dots-only, bounded length."""
    cleaned = _UNSAFE.sub("_", str(text)).strip("._") or "_"
    if len(cleaned) > MAX_COMPONENT:
        digest = hashlib.sha1(cleaned.encode()).hexdigest()[:10]
        cleaned = f"{cleaned[: MAX_COMPONENT - 11]}_{digest}"
    return cleaned


def variant_names(constexpr_sets: list[Mapping[str, object]]) -> list[str]:
    """Readable names for the variants of one kernel within one shape.

    Only the constexprs whose values differ within the group make the name
    (``BLOCK_M=64_num_warps=4``); a group of one is ``default``. Clashes left
    after that get a numeric suffix, so names are unique and stable.
    """
    if not constexpr_sets:
        return []
    keys = sorted({k for s in constexpr_sets for k in s})
    varying = [k for k in keys if len({repr(s.get(k)) for s in constexpr_sets}) > 1]
    names: list[str] = []
    for s in constexpr_sets:
        name = "_".join(f"{k}={s.get(k)}" for k in varying) or "default"
        names.append(safe_component(name))
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        n = seen.get(name, 0)
        seen[name] = n + 1
        unique.append(name if n == 0 else f"{name}_{n}")
    return unique


@attrs.frozen(kw_only=True)
class IndexRow:
    shape: str
    kernel: str
    file: str  # relative to the ttgir/ folder
    launches: int


def write_index(ttgir_root: Path, rows: Iterable[IndexRow]) -> Path:
    """Write ``index.tsv`` atomically (temp file + rename), sorted."""
    lines = ["\t".join(INDEX_COLUMNS)]
    for r in sorted(rows, key=lambda r: (r.shape, r.kernel, r.file)):
        lines.append(f"{r.shape}\t{r.kernel}\t{r.file}\t{r.launches}")
    return write_text_atomic(ttgir_root / INDEX_NAME, "\n".join(lines) + "\n")


def read_index(ttgir_root: Path) -> list[IndexRow]:
    path = ttgir_root / INDEX_NAME
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) != 4:
            continue  # a truncated last line from a killed process
        try:
            launches = int(parts[3])
        except ValueError:
            continue
        rows.append(IndexRow(shape=parts[0], kernel=parts[1], file=parts[2], launches=launches))
    return rows


#: A variant counts as measured when it was launched more than this many times outside
#: the autotune sweep. Input construction launches its kernels once or a few times per
#: shape (2-4 in the H200 campaigns of docs/validation/data, whose measured kernels show
#: 161-607); one timed call launches
#: the measured kernel at least 8 times under Triton's do_bench (1 + 5 estimates + at
#: least 1 warm-up + 1 timed) and 11 under zl's graph timer.
LAUNCH_FLOOR = 4


def launch_counts(ttgir_root: Path) -> dict[str, int] | None:
    """Launches per dumped file (relative to ``ttgir/``), or None when the cell launched
    nothing it indexed (no index, or a compile-only cell): then nothing can be scoped."""
    counts: dict[str, int] = {}
    for row in read_index(ttgir_root):
        counts[row.file] = max(counts.get(row.file, 0), row.launches)
    return counts if any(counts.values()) else None


def is_measured(rel: str, launches: Mapping[str, int] | None, floor: int = LAUNCH_FLOOR) -> bool:
    """Whether the variant ``rel`` counts: always when the cell cannot be scoped, and a
    dumped file the index does not list is kept rather than silently dropped."""
    if launches is None or rel not in launches:
        return True
    return launches[rel] > floor


@attrs.frozen(kw_only=True)
class IrSummary:
    """What screening needs from one cell's dump.

    ``convert_layouts`` counts the measured variants only (:data:`LAUNCH_FLOOR`);
    ``convert_layouts_all`` every dumped variant; ``unmeasured`` names the variants
    left out that hold any, with their launches and counts.
    """

    fingerprint: str | None  # None when there is no .ttgir at all (not "equal")
    files: int
    kernels: int
    convert_layouts: int
    convert_layouts_all: int = 0
    scoped: bool = False  # False: no launches to scope by; every variant counted
    unmeasured: tuple[tuple[str, int, int], ...] = ()  # (file, launches, convert_layouts)


def summarize(ttgir_root: Path, floor: int = LAUNCH_FLOOR) -> IrSummary:
    """Fingerprint = sha256 over sorted (relative path, content) of ``*.ttgir`` only."""
    files = sorted(p for p in ttgir_root.rglob("*.ttgir") if p.is_file()) if ttgir_root.is_dir() else []
    if not files:
        return IrSummary(fingerprint=None, files=0, kernels=0, convert_layouts=0)
    launches = launch_counts(ttgir_root)
    digest = hashlib.sha256()
    kernels: set[str] = set()
    measured = total = 0
    unmeasured: list[tuple[str, int, int]] = []
    for path in files:
        rel = path.relative_to(ttgir_root).as_posix()
        content = path.read_bytes()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(content).digest())
        parts = rel.split("/")
        kernels.add(parts[1] if len(parts) >= 3 else parts[0])
        converts = len(_CONVERT_LAYOUT.findall(content.decode("utf-8", errors="replace")))
        total += converts
        if is_measured(rel, launches, floor):
            measured += converts
        elif converts and launches is not None:  # not measured: the index lists it
            unmeasured.append((rel, launches[rel], converts))
    return IrSummary(fingerprint=digest.hexdigest(), files=len(files), kernels=len(kernels),
                     convert_layouts=measured, convert_layouts_all=total,
                     scoped=launches is not None, unmeasured=tuple(unmeasured))
