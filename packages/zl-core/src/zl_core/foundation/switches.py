"""The two sides of a comparison: which environment each side runs with."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import UsageError


@attrs.frozen(kw_only=True)
class Sides:
    """Side A (reference) and side B (candidate) environments, and how to name them."""

    switch: str  # the main variable, or "multi" / "aa"
    a_value: str
    b_value: str
    a_env: dict[str, str]
    b_env: dict[str, str]

    def env(self, side: str) -> dict[str, str]:
        return dict(self.a_env if side == "A" else self.b_env)

    def value(self, side: str) -> str:
        return self.a_value if side == "A" else self.b_value

    def to_json(self) -> dict:
        return {"switch": self.switch, "a_value": self.a_value, "b_value": self.b_value,
                "a_env": self.a_env, "b_env": self.b_env}

    @classmethod
    def from_json(cls, data: dict) -> Sides:
        return cls(switch=str(data["switch"]), a_value=str(data.get("a_value", "")),
                   b_value=str(data.get("b_value", "")), a_env=dict(data.get("a_env", {})),
                   b_env=dict(data.get("b_env", {})))


AA_NO_SWITCH = "none"


def resolve_sides(backend: Backend, switch: str | None, a: str | None, b: str | None,
                  a_env: Sequence[tuple[str, str]] = (), b_env: Sequence[tuple[str, str]] = (),
                  *, aa: bool = False) -> Sides:
    """Build the sides from the command line, defaulting to the backend's own switch.

    ``--a``/``--b`` default to 0 and 1. With ``aa`` both sides get side A's
    environment (an A/A control: any "difference" is noise); an A/A with no switch
    named sets no variable at all (switch ``none``).
    """
    extra_a, extra_b = dict(a_env), dict(b_env)
    if aa and switch is None and not extra_a and not extra_b and a is None and b is None:
        # A plain A/A control sets nothing: naming the backend's switch at 0 would
        # suggest a switch was involved.
        return Sides(switch=AA_NO_SWITCH, a_value="-", b_value="-", a_env={}, b_env={})
    if switch is None and (extra_a or extra_b) and a is None and b is None:
        name = "multi"
        env_a, env_b = extra_a, extra_b
        va = ",".join(f"{k}={v}" for k, v in sorted(extra_a.items())) or "-"
        vb = ",".join(f"{k}={v}" for k, v in sorted(extra_b.items())) or "-"
    else:
        if switch is not None and not switch.strip():
            raise UsageError("--switch is empty: name an environment variable the compiler reads "
                             "(e.g. --switch DISABLE_MMA_V3), or leave --switch out for the "
                             f"{backend.name} backend's default switch")
        name = switch or backend.default_switch
        if not name:
            raise UsageError(f"backend {backend.name} declares no default compiler switch; "
                             "name one with --switch NAME [--a VALUE --b VALUE]")
        if len(name) > 100:
            raise UsageError(f"switch name of {len(name)} characters ({name[:24]}...): use an "
                             "environment variable name the compiler reads")
        if not name.replace("_", "").isalnum():
            raise UsageError(f"malformed switch name {name!r}: use an environment variable name")
        va = "0" if a is None else a
        vb = "1" if b is None else b
        env_a = {name: va, **extra_a}
        env_b = {name: vb, **extra_b}
    if aa:
        return Sides(switch=name, a_value=va, b_value=va, a_env=env_a, b_env=dict(env_a))
    if env_a == env_b:
        raise UsageError("sides A and B have the same environment; to measure noise on purpose "
                         "use zl ab --aa")
    return Sides(switch=name, a_value=va, b_value=vb, a_env=env_a, b_env=env_b)

