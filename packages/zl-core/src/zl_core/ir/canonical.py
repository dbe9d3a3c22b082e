"""Canonical TTGIR: the text two compilations share when they differ only in names.

What is dropped or renamed, and why:

* ``#locN = loc(...)`` definitions and every ``loc(...)`` suffix: source paths and
  line numbers move with every edit to a file that does not touch the kernel;
* SSA values (``%a_tile_27``, ``%c8_i32``, ``%arg10``): Triton names them after the
  Python variables and numbers them in order, so renaming a variable or inserting
  one op renames everything after it. Each value is named instead after what
  defines it: the op's mnemonic and a short hash of its defining line, in which
  operands already carry their canonical names (value numbering). A value keeps its
  name wherever its definition is unchanged, so an inserted op shows up in a diff
  as that op and the values that really depend on it, not as a renumbered kernel.
  Function arguments are named by position (``%arg0``...);
* hash-like segments of symbol names (``@kernel_3fa2b9c1d0``): generated kernels
  carry a content or cache hash that differs between otherwise identical builds.

Everything else (ops, types, layouts, attribute values) stays byte for byte, so
canonical equality is "the same program up to names and source locations".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping

_LOC_DEF = re.compile(r"^\s*#loc\d*\s*=\s*loc\(")
_SSA = re.compile(r"%(?:[A-Za-z_$.][\w$.\-]*|\d+)")
_SYMBOL_HASH = re.compile(r"(?<=[_.])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}(?=$|[_.\"])")
_SYMBOL = re.compile(r'@("[^"]*"|[\w$.\-]+)')
_FUNC = re.compile(r"\btt\.func\b")
_MNEMONIC = re.compile(r'=\s*"?(?:[a-z_]\w*\.)+([a-z_]\w*)"?')
_BLOCK = re.compile(r"^\s*\^bb\d+")
HASH_CHARS = 5


def strip_locations(text: str) -> str:
    """The text without ``#loc`` definitions and ``loc(...)`` suffixes (paren-balanced)."""
    lines = []
    for line in text.splitlines():
        if _LOC_DEF.match(line):
            continue
        lines.append(_drop_loc_calls(line).rstrip())
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def _drop_loc_calls(line: str) -> str:
    """Remove every ``loc(...)`` (with the space before it); strings may hold parens."""
    out: list[str] = []
    i, n = 0, len(line)
    in_string = False
    while i < n:
        ch = line[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(line[i + 1])
                i += 2
                continue
            in_string = ch != '"'
            i += 1
            continue
        if ch == '"':
            in_string = True
            out.append(ch)
            i += 1
            continue
        if line.startswith("loc(", i) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in "_.#")):
            end = _matching_paren(line, i + 3)
            if end < 0:
                out.append(line[i:])
                break
            while out and out[-1] == " ":
                out.pop()
            i = end + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _matching_paren(line: str, open_at: int) -> int:
    depth, in_string, i = 0, False, open_at
    while i < len(line):
        ch = line[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            in_string = ch != '"'
        elif ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def canonical_symbol(name: str) -> str:
    """A symbol name with hash-like segments (8+ hex digits, letters and digits) as ``h``."""
    return _SYMBOL_HASH.sub("h", name)


def _renamed(known: Mapping[str, str], unknown: str | None = None) -> Callable[[re.Match[str]], str]:
    """A replacement for ``_SSA.sub``: each value's name in ``known``, ``unknown`` for a
    value it lacks (None: every value is known)."""
    def rename(match: re.Match[str]) -> str:
        token = match.group(0)
        return known[token] if unknown is None else known.get(token, unknown)
    return rename


def canonical_ttgir(text: str) -> str:
    """The canonical form of one TTGIR module (see the module docstring)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    region_context: list[str] = [""]
    out: list[str] = []
    for line in strip_locations(text).splitlines():
        line = _SYMBOL.sub(lambda m: "@" + canonical_symbol(m.group(1)), line)
        if _FUNC.search(line) and "(" in line:
            names, taken = _argument_names(line), set()  # each function is its own scope
            taken.update(names.values())
        tokens = _SSA.findall(line)
        fresh = [t for t in dict.fromkeys(tokens) if t not in names]
        if fresh:
            skeleton = _SSA.sub(_renamed(names, "%?"), line.strip())
            if _BLOCK.match(line):
                skeleton = region_context[-1] + skeleton  # block args: which region they open
            digest = hashlib.sha1(skeleton.encode()).hexdigest()[:HASH_CHARS]
            stem = _stem(line)
            for k, token in enumerate(fresh):
                base = f"%{stem}_{digest}" + (f".{k}" if len(fresh) > 1 else "")
                name, extra = base, 1
                while name in taken:  # the same line twice, or a short-hash clash
                    extra += 1
                    name = f"{base}_{extra}"
                names[token] = name
                taken.add(name)
        line = _SSA.sub(_renamed(names), line)
        if line.rstrip().endswith("{"):
            region_context.append(line.strip())
        elif line.strip().startswith("}") and len(region_context) > 1:
            region_context.pop()
        out.append(line)
    return "\n".join(out) + "\n"


def _stem(line: str) -> str:
    m = _MNEMONIC.search(line)
    if m:
        return m.group(1)
    stripped = line.strip()
    if stripped.startswith("^bb"):
        return "barg"
    word = re.match(r"(?:[a-z_]\w*\.)+([a-z_]\w*)", stripped)
    return word.group(1) if word else "v"


def _argument_names(line: str) -> dict[str, str]:
    """Function arguments are named by position: ``%arg0``, ``%arg1``, ..."""
    args = re.findall(r"(%(?:[A-Za-z_$.][\w$.\-]*|\d+))\s*:", line.partition("(")[2])
    return {token: f"%arg{k}" for k, token in enumerate(dict.fromkeys(args))}
