"""The frozen records a vendor plugin answers with: the descriptor it returns from
``zl_backends``, and an in-process telemetry reading (``zl_sample_telemetry``)."""

from __future__ import annotations

import re
from typing import Any

import attrs

from zl_core.foundation import convert
from zl_core.foundation.compiler_env import CompilerEnv


def _tuple_of_str(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _frozenset_of_str(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset((value,))
    return frozenset(str(v) for v in value)


@attrs.frozen(kw_only=True)
class CompileTarget:
    """One Triton target to compile for without a device: ``GPUTarget(kind, arch, warp_size)``."""

    kind: str
    arch: int | str
    warp_size: int

    @property
    def name(self) -> str:
        """As users type it (``<kind>:<arch>``)."""
        return f"{self.kind}:{self.arch}"

    @property
    def triple(self) -> tuple[str, int | str, int]:
        return (self.kind, self.arch, self.warp_size)


@attrs.frozen(kw_only=True)
class TargetGrammar:
    """How a backend's compile-only targets are written: ``<kind>:<arch>``.

    ``kind`` is Triton's name for the compiler backend (the text before the colon);
    ``arch`` a regular expression for what follows it, read as a number when it is
    all digits; ``usage`` and ``examples`` are what messages show.
    """

    kind: str = attrs.field(converter=lambda s: str(s).strip().lower())
    arch: str
    warp_size: int
    usage: str
    examples: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    #: The target ``--compile-only`` takes when none is given ("" = none; name one).
    default: str = ""

    def parse(self, text: str) -> CompileTarget | None:
        """The target ``text`` names, or None when it is not of this grammar."""
        kind, sep, arch = (text or "").strip().lower().partition(":")
        if not sep or kind != self.kind or not re.fullmatch(self.arch, arch):
            return None
        return CompileTarget(kind=kind, arch=int(arch) if arch.isdigit() else arch,
                             warp_size=self.warp_size)

    def describe(self) -> str:
        shown = ", ".join(self.examples)
        return f"{self.usage} (e.g. {shown})" if shown else self.usage


@attrs.frozen(kw_only=True, init=False)
class Backend:
    """What zl needs to know about one accelerator family.

    Built with keywords only, so fields can be added without breaking plugins.
    Capabilities describe what the backend *can* do; they are never inferred
    from the backend's name anywhere above the plugins.

    ``flaggems_vendor=``, the name ``vendor`` had before it was neutral, is still taken
    (it sets ``vendor``) and read (:attr:`flaggems_vendor`), so backends and providers
    written to it keep working.
    """

    #: Canonical name, lower case (``cuda``, ``musa``, ...).
    name: str = attrs.field(converter=lambda s: str(s).strip().lower())
    #: Other names users may type (``nvidia``, ``nv``).
    aliases: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    #: Environment variables that pin visible devices (``CUDA_VISIBLE_DEVICES``).
    visibility_env_keys: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    #: What one entry of those variables may be, as the vendor's runtime reads it (a
    #: regular expression, matched whole; :mod:`zl_core.plugins.visibility`), and in words.
    visible_id: str = r"\d+"
    visible_id_forms: str = "a device index (0, 1, ...)"
    #: Attribute of ``torch`` that holds the device API (``cuda``, ``musa``, ``npu``).
    torch_namespace: str = ""
    #: Module that must be imported for that attribute to exist (``torch_musa``).
    torch_extension: str = ""
    #: The vendor's name as libraries that pick their kernels by vendor spell it
    #: (``nvidia``, ``amd``, ``mthreads``, ``ascend``); a provider whose library does so
    #: reads it (zl-flaggems sets FlagGems' ``GEMS_VENDOR`` from it).
    vendor: str = ""
    #: Whether kernels can be timed by graph capture and replay on this backend.
    graph_capture: bool = False
    #: Whether Triton's compilation listener and launch hooks work on this backend.
    triton_hooks: bool = True
    #: Benchmarks whose graph capture is never attempted, keyed by the pytest
    #: function name minus its ``test_`` prefix.
    capture_deny: frozenset[str] = attrs.field(factory=frozenset, converter=_frozenset_of_str)
    #: The vendor's default compiler switch for ``zl screen`` (FlagTree's RLC switch).
    default_switch: str = ""
    #: The targets Triton compiles for on this backend without a device
    #: (``--compile-only --target``); None when it has none.
    compile_targets: TargetGrammar | None = None
    #: The modules whose build is the cells' compiler on this backend (FlagTree's builds
    #: install as ``triton`` too); each cell's identity digests their files
    #: (``compiler_build``, :mod:`zl_core.foundation.compiler_build`).
    compiler_modules: tuple[str, ...] = attrs.field(default=("triton",), converter=_tuple_of_str)
    #: The vendor's own variables of the compiler, and the families of its switches (a
    #: switch scrubs its whole family from what cells inherit): :mod:`zl_core.foundation.compiler_env`.
    compiler_env: CompilerEnv = attrs.field(factory=CompilerEnv)
    #: One line for ``zl backends``.
    description: str = ""

    def __init__(self, *, flaggems_vendor: str | None = None, **fields: Any) -> None:
        if flaggems_vendor is not None:  # the earlier name of ``vendor``: it wins when given
            fields["vendor"] = flaggems_vendor
        self.__attrs_init__(**fields)

    @property
    def flaggems_vendor(self) -> str:
        """``vendor``, under its earlier name (providers written to it read this)."""
        return self.vendor

    @name.validator
    def _check_name(self, _attribute: attrs.Attribute, value: str) -> None:
        if not value or not value.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"backend name must be a plain word, got {value!r}")

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name followed by every alias, lower case."""
        return (self.name, *(a.lower() for a in self.aliases))

    @property
    def capabilities(self) -> dict[str, Any]:
        """The capability fields, for listings and run identities."""
        return {
            "graph_capture": self.graph_capture,
            "triton_hooks": self.triton_hooks,
            "capture_deny": sorted(self.capture_deny),
            "default_switch": self.default_switch or None,
            "vendor": self.vendor or None,
            "torch_namespace": self.torch_namespace or None,
            "visibility_env_keys": list(self.visibility_env_keys),
            "compile_targets": self.compile_targets.describe() if self.compile_targets else None,
            "compile_target_default": (self.compile_targets.default or None) if self.compile_targets else None,
            "compiler_modules": list(self.compiler_modules),
            "compiler_env": self.compiler_env.to_json(),
        }


#: What one device's telemetry sample holds (``zl_parse_telemetry``, ``zl_sample_telemetry``);
#: telemetry.tsv adds a timestamp before them (``store.layout.TELEMETRY_TSV_COLUMNS``).
TELEMETRY_COLUMNS = ("index", "sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "util_pct")


@attrs.frozen(kw_only=True)
class TelemetryReading:
    """One telemetry sample a backend took in-process, through a vendor library (the
    answer of ``zl_sample_telemetry``), or why that library cannot sample here."""

    #: What sampled, as zl doctor and the notes name it: "NVML (nvidia-ml-py 13.615.71)".
    sampler: str
    #: One row per device in the common telemetry columns (empty: it could not sample).
    rows: tuple[Any, ...] = attrs.field(default=(), converter=convert.any_tuple)
    #: Why it could not sample (rows empty): zl then runs ``zl_telemetry_command`` and
    #: says this once.
    unavailable: str = ""
