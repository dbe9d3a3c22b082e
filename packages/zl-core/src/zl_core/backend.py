"""The frozen descriptor a vendor plugin returns from ``zl_backends``."""

from __future__ import annotations

from typing import Any

import attrs


def _tuple_of_str(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _frozenset_of_str(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset((value,))
    return frozenset(str(v) for v in value)


@attrs.frozen(kw_only=True)
class Backend:
    """What zl needs to know about one accelerator family.

    Built with keywords only, so fields can be added without breaking plugins.
    Capabilities describe what the backend *can* do; they are never inferred
    from the backend's name anywhere above the plugins.
    """

    #: Canonical name, lower case (``cuda``, ``musa``, ...).
    name: str = attrs.field(converter=lambda s: str(s).strip().lower())
    #: Other names users may type (``nvidia``, ``nv``).
    aliases: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    #: Environment variables that pin visible devices (``CUDA_VISIBLE_DEVICES``).
    visibility_env_keys: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    #: Attribute of ``torch`` that holds the device API (``cuda``, ``musa``, ``npu``).
    torch_namespace: str = ""
    #: Module that must be imported for that attribute to exist (``torch_musa``).
    torch_extension: str = ""
    #: FlagGems' vendor name for ``GEMS_VENDOR`` (``nvidia``, ``mthreads``, ...).
    flaggems_vendor: str = ""
    #: Whether kernels can be timed by graph capture and replay on this backend.
    graph_capture: bool = False
    #: Whether Triton's compilation listener and launch hooks work on this backend.
    triton_hooks: bool = True
    #: Benchmarks whose graph capture is never attempted, keyed by the pytest
    #: function name minus its ``test_`` prefix.
    capture_deny: frozenset[str] = attrs.field(factory=frozenset, converter=_frozenset_of_str)
    #: The vendor's default compiler switch for ``zl screen`` (FlagTree's RLC switch).
    default_switch: str = ""
    #: One line for ``zl backends``.
    description: str = ""

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
            "flaggems_vendor": self.flaggems_vendor or None,
            "torch_namespace": self.torch_namespace or None,
            "visibility_env_keys": list(self.visibility_env_keys),
        }
