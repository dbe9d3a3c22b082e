"""Operator specs as users type them: ``op[:op_file[:dtype,dtype...]]``.

Names are checked against a strict pattern here, once, so an operator name can
never carry shell syntax, path separators or pytest node syntax further down.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

import attrs

from zl_core.foundation.errors import BadInputError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_DTYPE = re.compile(r"^[a-z][a-z0-9_]*$")
#: Names become folder and file names (``<campaign>/<op>/A``, ``test_<op_file>.py``):
#: well under the 255 bytes a file name may have, with room for prefixes.
MAX_NAME = 100
#: The dtype names users give (torch's), for suites that do not list their own.
TORCH_DTYPES = frozenset({
    "float16", "bfloat16", "float32", "float64", "half", "float", "double",
    "complex32", "complex64", "complex128", "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
})


def check_name(kind: str, value: str, *, example: str = "softmax, mm:mm:float16") -> str:
    """Return ``value`` if it is a safe identifier-like name, else raise BadInputError."""
    if len(value) > MAX_NAME:
        raise BadInputError(f"{kind} of {len(value)} characters ({value[:24]}...): names are at "
                            f"most {MAX_NAME} characters; give the operator's real name")
    if not _NAME.match(value) or ".." in value:
        raise BadInputError(
            f"malformed {kind} {value!r}: use letters, digits, '_' and '.' only "
            f"(e.g. {example})"
        )
    return value


def check_dtypes(names, *, where: str = "") -> tuple[str, ...]:
    """Dtype names as given (``float16``...), each checked; empty items dropped."""
    dtypes = tuple(d.strip() for d in names if d.strip())
    for d in dtypes:
        if len(d) > MAX_NAME or not _DTYPE.match(d):
            raise BadInputError(f"malformed dtype {d!r}{where}: use names like float16, bfloat16")
    return dtypes


def dtype_problem(op: str, dtype: str, *, runs: Sequence[str], choices: Sequence[str],
                  suite: str) -> str | None:
    """Why ``dtype`` cannot filter operator ``op``, None when it can: ``runs`` are the
    dtypes its benchmark runs, ``choices`` the ones the suite's command line accepts
    (either empty where the suite does not say; then torch's names bound them)."""
    selectable = [d for d in runs if not choices or d in choices]
    if choices and dtype not in choices:
        return (f"dtype {dtype!r} of {op} is not one the {suite} suite's benchmark command line "
                f"accepts ({', '.join(choices)}){_near(dtype, selectable if runs else choices)}; "
                + (_what_runs(runs, selectable) if runs else "name one of those"))
    if runs and dtype not in runs:
        return (f"operator {op} has no dtype {dtype!r}{_near(dtype, selectable)}: "
                f"{_what_runs(runs, selectable)} (zl ops lists each operator's dtypes)")
    if not runs and not choices and dtype not in TORCH_DTYPES:
        return (f"operator {op} has no dtype {dtype!r}{_near(dtype, TORCH_DTYPES)}; it takes torch "
                "dtype names (zl ops lists each operator's dtypes)")
    return None


def _what_runs(runs: Sequence[str], selectable: Sequence[str]) -> str:
    said = f"its benchmark runs {', '.join(runs)}"
    if not selectable:
        return f"{said}, none of which its command line accepts; give it no dtype filter"
    if list(selectable) != list(runs):
        said += f", of which a dtype filter can name {', '.join(selectable)}"
    return f"{said}; name {'it' if len(selectable) == 1 else 'some of them'}, or none to run them all"


def _near(dtype: str, names) -> str:
    close = difflib.get_close_matches(dtype, sorted(names), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


@attrs.frozen(kw_only=True)
class OpSpec:
    """One operator to measure: its name, the benchmark file stem and the dtypes.

    ``op`` is the name the campaign knows it by (its folder, its rows):
    ``[source:]function[@file]``. ``source`` is "" for the default source; ``func`` is
    the benchmark function (``test_<func>``), "" when it is ``op`` itself.
    """

    op: str
    op_file: str
    dtypes: tuple[str, ...] = ()
    source: str = ""
    func: str = ""

    @property
    def function(self) -> str:
        return self.func or self.op

    @classmethod
    def parse(cls, text: str, *, prefixes: frozenset[str] = frozenset(),
              default_source: str = "") -> OpSpec:
        """Parse ``[source:]op[@file][:op_file[:dtype,dtype...]]``; an empty op_file means
        ``op`` (or the ``@file``). ``source:`` is read as a source only when it is one of
        ``prefixes`` (the campaign's source names); ``default_source:`` names the default."""
        parts = text.strip().split(":")
        source = ""
        if len(parts) > 1 and parts[0] in prefixes:
            source, parts = parts[0], parts[1:]
        if len(parts) > 3 or not parts[0]:
            raise BadInputError(
                f"malformed op spec {text!r}: expected [source:]op[@file][:op_file[:dtype,...]], "
                "e.g. mm:mm:float16,bfloat16 or vllm:fused_moe"
            )
        func, at, at_file = parts[0].partition("@")
        func = check_name("op name", func)
        if at:
            at_file = check_name("op file", at_file.removeprefix("test_").removesuffix(".py"))
        op_file = parts[1] if len(parts) > 1 and parts[1] else (at_file or func)
        op_file = op_file.removeprefix("test_")
        op_file = op_file.removesuffix(".py")
        check_name("op file", op_file)
        if at and op_file != at_file:
            raise BadInputError(f"op spec {text!r} names two files ({at_file} and {op_file}); "
                                f"give one: {func}@{op_file}")
        dtypes: tuple[str, ...] = ()
        if len(parts) == 3 and parts[2]:
            dtypes = check_dtypes(parts[2].split(","), where=f" in op spec {text!r}")
        if source == default_source:
            source = ""
        return cls.named(func, op_file, dtypes=dtypes, source=source, pinned=bool(at))

    @classmethod
    def named(cls, func: str, op_file: str, *, dtypes: tuple[str, ...] = (), source: str = "",
              pinned: bool = False) -> OpSpec:
        """The spec of ``func`` in ``op_file`` of ``source``; ``pinned`` puts the file in
        the name (``nextafter_@nextafter_``), for a function two benchmark files define."""
        op = (f"{source}:" if source else "") + func + (f"@{op_file}" if pinned else "")
        return cls(op=op, op_file=op_file, dtypes=dtypes, source=source,
                   func=func if op != func else "")

    def __str__(self) -> str:
        text = self.op
        pinned = "@" in self.op
        if (not pinned and self.op_file != self.function) or self.dtypes:
            text += ":" + ("" if pinned else self.op_file)
        if self.dtypes:
            text += ":" + ",".join(self.dtypes)
        return text
