"""A cell's autotune picks in the provider-neutral form the reports compare.

A recording cell keeps what its tuners picked for each key (``autotune_records/``, in
the provider's own format); :meth:`~zl_core.interface.provider.Provider.autotune_picks`
reads it back as :class:`Pick` records. Configs are text as the provider shows them, and
compared as text: two picks are the same config when their texts are equal.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class Pick:
    """One tuner key's pick in one cell, and the sweep behind it when one was timed."""

    kernel: str  # the tuned function's name, as markers print it
    tuner: str  # the tuner's own id (a kernel may have several tuners)
    key: str  # the tuner's key, as the record spells it
    config: str  # the config picked
    #: ``(config, ms)`` of every candidate the sweep timed, fastest first; () when the
    #: pick came without a sweep (a cached or replayed key).
    sweep: tuple[tuple[str, float], ...] = ()

    def timed(self, config: str) -> float | None:
        """The sweep's time of ``config``, None where the sweep did not time it."""
        return next((ms for name, ms in self.sweep if name == config), None)

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "tuner": self.tuner, "key": self.key, "config": self.config,
                "sweep": [{"config": c, "ms": ms} for c, ms in self.sweep]}
