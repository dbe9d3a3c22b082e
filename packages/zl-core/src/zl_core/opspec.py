"""Operator specs as users type them: ``op[:op_file[:dtype,dtype...]]``.

Names are checked against a strict pattern here, once, so an operator name can
never carry shell syntax, path separators or pytest node syntax further down.
"""

from __future__ import annotations

import re

import attrs

from zl_core.errors import BadInputError

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


def check_name(kind: str, value: str) -> str:
    """Return ``value`` if it is a safe identifier-like name, else raise BadInputError."""
    if len(value) > MAX_NAME:
        raise BadInputError(f"{kind} of {len(value)} characters ({value[:24]}...): names are at "
                            f"most {MAX_NAME} characters; give the operator's real name")
    if not _NAME.match(value) or ".." in value:
        raise BadInputError(
            f"malformed {kind} {value!r}: use letters, digits, '_' and '.' only "
            "(e.g. softmax, mm:mm:float16)"
        )
    return value


def check_dtypes(names, *, where: str = "") -> tuple[str, ...]:
    """Dtype names as given (``float16``...), each checked; empty items dropped."""
    dtypes = tuple(d.strip() for d in names if d.strip())
    for d in dtypes:
        if len(d) > MAX_NAME or not _DTYPE.match(d):
            raise BadInputError(f"malformed dtype {d!r}{where}: use names like float16, bfloat16")
    return dtypes


@attrs.frozen(kw_only=True)
class OpSpec:
    """One operator to measure: its name, the benchmark file stem and the dtypes."""

    op: str
    op_file: str
    dtypes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> OpSpec:
        """Parse ``op[:op_file[:dtype,dtype...]]``; an empty op_file means ``op``."""
        parts = text.strip().split(":")
        if len(parts) > 3 or not parts[0]:
            raise BadInputError(
                f"malformed op spec {text!r}: expected op[:op_file[:dtype,dtype...]], "
                "e.g. mm:mm:float16,bfloat16"
            )
        op = check_name("op name", parts[0])
        op_file = parts[1] if len(parts) > 1 and parts[1] else op
        op_file = op_file.removeprefix("test_")
        op_file = op_file.removesuffix(".py")
        check_name("op file", op_file)
        dtypes: tuple[str, ...] = ()
        if len(parts) == 3 and parts[2]:
            dtypes = check_dtypes(parts[2].split(","), where=f" in op spec {text!r}")
        return cls(op=op, op_file=op_file, dtypes=dtypes)

    def __str__(self) -> str:
        text = self.op
        if self.op_file != self.op or self.dtypes:
            text += f":{self.op_file}"
        if self.dtypes:
            text += ":" + ",".join(self.dtypes)
        return text
