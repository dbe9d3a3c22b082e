"""What a campaign runs, as one frozen record: resolved once by the application layer
(:mod:`zl_core.app`) and handed to :func:`~.screen_campaign.run_screen` or
:func:`~.ab_campaign.run_ab` whole, so no function between the two takes its parts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from zl_core.foundation import convert
from zl_core.foundation.backend import Backend
from zl_core.foundation.switches import Sides
from zl_core.interface.opspec import OpSpec
from zl_core.interface.provider import CheckSpec, Provider
from zl_core.store import record
from zl_core.store.layout import CampaignLayout

from .ab_task import RoundsPlan
from .settings import CellSettings


def _op_specs(ops: Iterable[OpSpec]) -> tuple[OpSpec, ...]:
    return tuple(ops)


def _checks(checks: Mapping[str, CheckSpec]) -> dict[str, CheckSpec]:
    return dict(checks)


@attrs.frozen(kw_only=True)
class CampaignSpec:
    """A screen (``plan`` None) or an A/B campaign (its ``plan``; A/A with ``aa``)."""

    provider: Provider
    backend: Backend
    #: The device of a serial campaign; None: the backend's default, or lanes or a
    #: scheduler, whose executor hands every task its own (campaigns.executor.Lane).
    device: str | None
    sides: Sides
    ops: tuple[OpSpec, ...] = attrs.field(converter=_op_specs)
    settings: CellSettings
    runs_root: Path = attrs.field(converter=Path)
    #: An unfinished campaign to continue (finished cells kept, half-written ones rerun).
    resume: CampaignLayout | None = None
    #: Fields campaign.json records besides the spec's own (the options, the lanes, the
    #: configuration file), read back by ``--resume``.
    recorded: Mapping[str, object] = attrs.field(factory=dict, converter=convert.object_dict)
    #: A screen's operators that are not run (operator -> why), listed as SKIPPED.
    skipped: Mapping[str, str] = attrs.field(factory=dict, converter=convert.str_dict)
    #: The rounds of an A/B campaign; None: a screen.
    plan: RoundsPlan | None = None
    #: An A/B campaign's A/A controls, timed after its operators.
    controls: tuple[OpSpec, ...] = attrs.field(default=(), converter=_op_specs)
    #: Side A's environment on both sides (``aa_...``): the noise floor, no switch.
    aa: bool = False
    #: The screen an A/B campaign took its operators from, recorded in campaign.json.
    screen: Path | None = None
    #: Seconds between an A/B campaign's telemetry samples; 0: none taken.
    telemetry_interval: float = 0.0
    #: An A/B campaign's accuracy tests per operator (a sealed campaign's): each side runs
    #: them once its rounds are done (campaigns.checks).
    checks: Mapping[str, CheckSpec] = attrs.field(factory=dict, converter=_checks)
    #: The control side: side B's environment plus these variables (the switch on, every
    #: phase it gates off); its round-1 cell's TTGIR must equal side A's. () for none.
    control_env: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=convert.str_pairs)
    #: Canary operators first (campaigns.canary): ``auto`` for a long campaign, ``on``
    #: (the application's answer for a frozen one), ``off``.
    canary: str = "off"
    #: A third side R (side B's environment, its own autotune picks) beside A and B, and
    #: side A's picks recorded twice (``zl ab --retuned``).
    retuned: bool = False

    @property
    def kind(self) -> str:
        """campaign.json's kind: ``screen``, ``ab`` or ``aa``."""
        if self.plan is None:
            return record.SCREEN
        return record.AA if self.aa else record.AB
