"""Operators a screen lists as SKIPPED instead of running: dismissed by the user
(``--dismiss FILE``) or skipped unconditionally by the benchmark itself. Each keeps
its reason; none is dropped silently."""

from __future__ import annotations

from pathlib import Path

from zl_core.foundation.errors import BadInputError
from zl_core.foundation.small_files import read_small
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import Provider
from zl_core.interface.sources import Sources

#: A dismiss list names operators; anything this big is another file.
MAX_DISMISS_BYTES = 1 << 20


def read_dismiss(path: Path) -> dict[str, str]:
    """``op  reason...`` per line (``#`` comments, blank lines ignored); a reason is required."""
    raw = read_small(path, MAX_DISMISS_BYTES, what="--dismiss",
                     hint="it lists operators, one 'op  reason' a line")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"--dismiss {path} is not UTF-8 text (byte {exc.start}); it lists "
                            "operators, one 'op  reason' a line") from None
    dismissed: dict[str, str] = {}
    for number, written in enumerate(text.splitlines(), start=1):
        line = written.split("#", 1)[0].strip()
        if not line:
            continue
        op, _, reason = line.partition(" ")
        if not reason.strip():
            raise BadInputError(f"--dismiss {path} line {number}: {op!r} has no reason; write "
                                "'op  why it is never run'")
        dismissed[op] = reason.strip()
    return dismissed


def skipped_ops(provider: Provider, sources: Sources | str | None, ops: list[OpSpec],
                dismissed: dict[str, str]) -> dict[str, str]:
    """The planned operators not to run, each with its reason."""
    if not isinstance(sources, Sources):
        sources = Sources.single(sources, provider.default_source_name)
    marks: dict[tuple[str, str, str], str] = {}
    for name in dict.fromkeys(op.source for op in ops):
        for info in provider.list_ops(sources.path(name)):
            if info.skip:
                marks[(name, info.op, _stem(info.op_file))] = info.skip
    out = {}
    for op in ops:
        mark = marks.get((op.source, op.function, _stem(op.op_file)))
        if op.op in dismissed:
            out[op.op] = f"dismissed: {dismissed[op.op]}"
        elif mark:
            out[op.op] = f"benchmark skip mark: {mark}"
    return out


def _stem(op_file: str) -> str:
    return op_file.removeprefix("test_").removesuffix(".py")
