"""Does the compiler the cells run read the switch? Asked before any cell runs.

A switch that the installed compiler never reads makes both sides compile the
same code: every operator comes out NO_IR_DIFF and the device time is spent
comparing two identical compilations. So before a campaign starts, the provider
of its cells is asked (:meth:`zl_core.interface.provider.Provider.switch_report`) which of
the variables that differ between the sides its compiler reads; an unread one is
refused on one line, naming the switches it does read that look alike, unless
``--force-switch``. A provider that runs no Triton answers None and is not held
by this check.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Mapping

import attrs

from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import UsageError
from zl_core.foundation.switches import AA_NO_SWITCH, Sides

log = logging.getLogger(__name__)

# Words too common in compiler switch names to make two of them look alike.
_COMMON_WORDS = frozenset({"TRITON", "ENABLE", "DISABLE", "USE", "DUMP", "PATH", "DIR", "DEFAULT"})


@attrs.frozen(kw_only=True)
class SwitchReport:
    """What a provider's compiler says about the switches of a campaign.

    Built by providers (the Triton knowledge lives with them); judged here.
    """

    #: The compiler asked, as the user should read it: ``triton 3.6.0 in /usr/bin/python3``.
    compiler: str
    #: Each asked switch the compiler reads -> how (``compile-cache key``, ``knob``, ...).
    read: Mapping[str, str] = attrs.field(factory=dict)
    #: Each asked switch it does not read.
    unread: tuple[str, ...] = ()
    #: Every switch name the compiler was seen to read (for look-alike hints).
    known: tuple[str, ...] = ()
    #: Switches of this compiler known to change TTGIR, as command-line hints
    #: (``--switch DISABLE_MMA_V3 (fp16/bf16 GEMMs)``).
    suggestions: tuple[str, ...] = ()
    #: Why the compiler could not be asked (then nothing else is known).
    error: str = ""


class IneffectiveSwitchError(UsageError):
    """Raised when the compiler of the cells does not read a switch that differs
    between the sides (unless ``--force-switch``)."""


def switched_names(sides: Sides) -> list[str]:
    """The variables whose value differs between side A and side B."""
    keys = set(sides.a_env) | set(sides.b_env)
    return sorted(k for k in keys if sides.a_env.get(k) != sides.b_env.get(k))


def lookalikes(name: str, known: tuple[str, ...] | list[str], limit: int = 4) -> list[str]:
    """Names in ``known`` that look like ``name``: close spellings first, then names
    sharing a distinctive word (``RLC``, ``MMA``)."""
    upper = {k.upper(): k for k in known if k.upper() != name.upper()}
    close = difflib.get_close_matches(name.upper(), list(upper), n=limit, cutoff=0.75)
    words = {w for w in name.upper().split("_") if len(w) >= 3 and w not in _COMMON_WORDS}
    sharing = sorted(k for k in upper if words & set(k.split("_")) and k not in close)
    return [upper[k] for k in [*close, *sharing][:limit]]


def refusal(name: str, report: SwitchReport, *, backend: Backend, defaulted: bool) -> str:
    """The one-line refusal for a switch ``report`` says is not read."""
    alike = lookalikes(name, report.known)
    hints = " or ".join(report.suggestions)
    if defaulted:
        head = (f"the {backend.name} backend's default switch {name} is not read by "
                f"{report.compiler} (not in its compile-cache key, its knobs or its own sources), so "
                "both sides would compile the same code")
        if alike:
            return (f"{head}; switches it reads that look alike: {', '.join(alike)}; name one with "
                    "--switch NAME, or pass --force-switch to run it anyway")
        example = f", e.g. {hints}" if hints else ""
        return (f"{head}; name a switch this compiler reads with --switch{example}; or pass "
                "--force-switch to run it anyway")
    head = f"switch {name} is not read by {report.compiler} (not in its compile-cache key, its knobs or its own sources)"
    if alike:
        return (f"{head}; switches it reads that look alike: {', '.join(alike)}; fix the name, or "
                "pass --force-switch to run it anyway")
    known = f"; switches known to change its TTGIR: {hints}" if hints else ""
    return f"{head} and it reads none that looks alike{known}; or pass --force-switch to run it anyway"


def check_switch(ask: Callable[[list[str], dict[str, str], dict[str, str]], SwitchReport | None],
                 sides: Sides, *, backend: Backend, defaulted: bool, force: bool) -> SwitchReport | None:
    """Ask (``ask(names, a_values, b_values)``: the provider's question, bound to its
    cell settings) whether the switched variables are read; refuse if not. What was
    found is logged; a question that could not be asked, or a forced switch, as a warning.

    Returns the report (None when the provider runs no Triton or nothing differs).
    Raises :class:`IneffectiveSwitchError` for an unread switch unless ``force``.
    """
    names = switched_names(sides)
    if sides.switch == AA_NO_SWITCH or not names:
        return None  # an A/A control: nothing is switched on purpose
    a_values = {n: sides.a_env.get(n, "") for n in names}
    b_values = {n: sides.b_env.get(n, "") for n in names}
    try:
        report = ask(names, a_values, b_values)
    except Exception as exc:  # noqa: BLE001 - a provider's failure to ask must not stop the campaign
        report = SwitchReport(compiler="the cells' compiler", error=f"{type(exc).__name__}: {exc}")
    if report is None:
        return None
    if report.error:
        log.warning(f"note: could not ask {report.compiler} whether it reads {', '.join(names)} "
                    f"({report.error}); the cells' preflight will say more")
        return report
    for name in names:
        if name in report.read:
            continue
        message = refusal(name, report, backend=backend, defaulted=defaulted and name == sides.switch)
        if not force:
            raise IneffectiveSwitchError(message)
        log.warning(f"note: {message.split(';')[0]}; running it anyway (--force-switch)")
    read = [f"{n} ({report.read[n]})" for n in names if n in report.read]
    if read:
        log.info(f"switch check: {report.compiler} reads {', '.join(read)}")
    return report


def check_campaign_switch(provider, sides: Sides, *, backend: Backend, python: str,
                          target: str | None, switch_given: str | None,
                          force: bool) -> SwitchReport | None:
    """:func:`check_switch` for a campaign whose cells ``provider`` runs in ``python``;
    ``switch_given`` is the ``--switch`` the user typed (None: the backend's default)."""

    def ask(names: list[str], a_values: dict[str, str], b_values: dict[str, str]):
        return provider.switch_report(python=python, names=names, a_values=a_values,
                                      b_values=b_values, target=target)

    return check_switch(ask, sides, backend=backend, force=force,
                        defaulted=switch_given is None and sides.switch == backend.default_switch)
