"""One error hierarchy. Every message says what is wrong and what to do next.

Exit codes (documented in docs/exit-codes.md):
  0 success; 2 usage, unknown name or unusable machine; 3 preflight failed;
  4 caliber mismatch (report refused); 5 a verdict named by ``--fail-on`` is present;
  6 a campaign ended with failed operators (a cell error, timeout or preflight), or a
  report was asked for an incomplete campaign; 7 a device stayed busy (another process
  held its lock) past ``--lock-timeout``; 128+N a signal N interrupted it
  (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_PREFLIGHT = 3
EXIT_CALIBER = 4
EXIT_VERDICT = 5
EXIT_FAILED = 6
EXIT_DEVICE_BUSY = 7


class ZlError(Exception):
    """Base of every error zl raises on purpose; carries the process exit code."""

    exit_code = EXIT_USAGE


class UsageError(ZlError):
    """Raised when a command line or an argument value cannot be used."""


class UnknownBackendError(UsageError):
    """Raised when a backend name matches no registered backend or alias."""

    def __init__(self, name: str, known: dict[str, tuple[str, ...]]):
        listing = ", ".join(
            f"{n} (aliases: {', '.join(a)})" if a else n for n, a in sorted(known.items())
        ) or "none are installed"
        super().__init__(
            f"unknown backend {name!r}; known backends: {listing}. "
            "Install its zl-backend-* package or pick one of these."
        )
        self.name = name


class UnknownProviderError(UsageError):
    """Raised when a suite or provider name matches no registered provider."""


class BadInputError(UsageError):
    """Raised when a file or value given by the user is malformed (op spec, JSON, YAML)."""


class NoDeviceError(UsageError):
    """Raised when a command needs a device and none is found."""


class ResultsUnwritableError(ZlError):
    """Raised when a campaign cannot write its results (a full disk, a folder gone)."""

    exit_code = EXIT_FAILED


class PreflightError(ZlError):
    """Raised when a cell cannot start: one named check failed before pytest ran."""

    exit_code = EXIT_PREFLIGHT

    def __init__(self, check: str, detail: str):
        super().__init__(f"PREFLIGHT_FAILED check={check} {detail}")
        self.check = check
        self.detail = detail


class CaliberMismatchError(ZlError):
    """Raised when cells measured under different conditions are to be compared."""

    exit_code = EXIT_CALIBER

    def __init__(self, problems: list[str]):
        super().__init__(
            "refusing to compare cells measured under different conditions "
            f"({len(problems)} problem(s)); pass --allow-caliber-mismatch to see the report anyway"
        )
        self.problems = problems


class VerdictGateError(ZlError):
    """Raised by ``zl report --fail-on`` when a verdict of the named kind is present."""

    exit_code = EXIT_VERDICT


class IncompleteCampaignError(ZlError):
    """Raised when a report is asked for a campaign that did not finish every operator."""

    exit_code = EXIT_FAILED


class CanaryFailedError(ZlError):
    """Raised when a canary operator of a long or frozen campaign failed: the rest of the
    plan is not run (``zl_core.campaigns.canary``)."""

    exit_code = EXIT_FAILED


class DeviceBusyError(ZlError):
    """Raised when a device's lock stayed held by another process past ``--lock-timeout``."""

    exit_code = EXIT_DEVICE_BUSY



class SealBrokenError(ZlError):
    """Raised when a frozen campaign may not start: something it was frozen against
    differs now (``problems`` names each broken precondition)."""

    exit_code = EXIT_PREFLIGHT

    def __init__(self, frozen: str, problems: list[str]):
        super().__init__(f"refusing to run the frozen campaign {frozen}: {len(problems)} "
                         "precondition(s) broken; restore what changed, or freeze anew")
        self.problems = tuple(problems)
