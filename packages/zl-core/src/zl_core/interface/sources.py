"""The checkouts one campaign reads operators from, each with the name its operators carry.

``--source`` (alias ``--flaggems-dir``) may be given more than once, each
``PATH`` or ``NAME=PATH``. The first is the default source: its operators are named
as they are (``softmax``). The others' operators carry their name as a prefix
(``vllm:fused_moe``); an unnamed one is named by the provider from what it finds
there (:meth:`zl_core.interface.provider.Provider.source_name`, e.g. ``vllm`` for a FlagGems-vllm
checkout).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from zl_core.foundation import convert
from zl_core.foundation.errors import UsageError
from zl_core.interface.opspec import check_name

SOURCE_NAME_EXAMPLE = "vllm, fork, main"


def split_item(text: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> (NAME, PATH); ``PATH`` -> (None, PATH). A path may hold ``=``
    after a separator (``/data/a=b``): only a leading identifier counts as a name."""
    head, sep, rest = str(text).partition("=")
    if sep and not head:
        raise UsageError(f"--source {text}: the name before '=' is empty; give "
                         f"NAME=DIR (e.g. vllm={rest or 'DIR'}) or the directory alone")
    if sep and "/" not in head and "\\" not in head:
        if not rest:
            raise UsageError(f"--source {text}: no directory after '='; give {head}=DIR")
        return check_name("source name", head, example=SOURCE_NAME_EXAMPLE), rest
    return None, str(text)


@attrs.frozen
class Sources:
    """Ordered (name, resolved path) pairs; the first is the default source."""

    entries: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=convert.str_pairs)

    @classmethod
    def resolve(cls, items: Iterable[str], name_of: Callable[[str], str | None],
                default_name: str) -> Sources:
        """From the command line's items; ``name_of(path)`` names an unnamed one."""
        entries: list[tuple[str, str]] = []
        for position, item in enumerate(items):
            name, raw = split_item(item)
            path = str(Path(raw).expanduser().resolve())
            if name is None:
                name = default_name if position == 0 else name_of(path)
            if not name:
                raise UsageError(f"cannot tell what to call the source {raw}: give it a name, "
                                 f"--source NAME={raw} (its operators are then NAME:op)")
            clash = next((p for n, p in entries if n == name), None)
            if clash is not None:
                raise UsageError(f"two sources are both called {name!r} ({clash} and {path}); "
                                 f"name one of them: --source OTHER={raw}")
            entries.append((check_name("source name", name, example=SOURCE_NAME_EXAMPLE), path))
        return cls(tuple(entries))

    @classmethod
    def single(cls, path: str | None, default_name: str = "main") -> Sources:
        return cls(((default_name, path),)) if path else cls(())

    @property
    def default(self) -> str | None:
        """The default source's path (None when the suite reads no checkout)."""
        return self.entries[0][1] if self.entries else None

    @property
    def default_name(self) -> str:
        return self.entries[0][0] if self.entries else ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.entries)

    @property
    def prefixes(self) -> frozenset[str]:
        """Names an op spec may start with (the default's too: ``main:softmax``)."""
        return frozenset(self.names) if len(self.entries) > 1 else frozenset()

    def path(self, name: str) -> str | None:
        """The checkout of source ``name`` ("" is the default)."""
        if not name:
            return self.default
        for n, p in self.entries:
            if n == name:
                return p
        raise UsageError(f"no source called {name!r}; the campaign reads "
                         + ", ".join(f"{n}={p}" for n, p in self.entries))

    def is_default(self, name: str) -> bool:
        return not name or name == self.default_name

    def to_json(self) -> list[dict[str, str]]:
        return [{"name": n, "path": p} for n, p in self.entries]

    @classmethod
    def from_json(cls, data: object) -> Sources | None:
        """Read back from campaign.json; None when the field is absent or malformed."""
        if not isinstance(data, list) or not data:
            return None
        entries = []
        for entry in data:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                    or not isinstance(entry.get("path"), str):
                return None
            entries.append((entry["name"], entry["path"]))
        return cls(tuple(entries))

    def items(self) -> tuple[str, ...]:
        """As the command line gives them (``NAME=PATH``), for a resume to pass on."""
        return tuple(f"{n}={p}" for n, p in self.entries)
