"""Retries of a cell that crashed, and what a resumed campaign keeps.

A cell that died by a signal or crashed (pytest's exit 1 included: a device fault
often surfaces as a failed test) is run again, at most twice; the same failure
twice in a row is deterministic and stops the retries. A timeout is never
retried (the cell was alive, only slow). Every earlier attempt's folder is kept
beside the cell as ``<side>.attempt<N>`` with its own ``run.log``.

When the benchmark rejects the requested dtype filter, the cell runs again
without it and says so (``dtype_fallback``). Whether a cell rejected its dtypes
is the provider's call (:meth:`~zl_core.interface.provider.Provider.rejected_dtypes`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import attrs

from zl_core.cells.cell import CellOutcome, prefixed, run_cell
from zl_core.interface import caliber
from zl_core.interface.provider import CellRequest, Provider
from zl_core.plugins.host import PluginHost

MAX_RETRIES = 2
#: pytest's "tests failed"; above 128 a shell reports a signal.
CRASH_CODES = (1,)


def crashed(outcome: CellOutcome) -> bool:
    if outcome.timed_out:
        return False
    return outcome.rc < 0 or outcome.rc > 128 or outcome.rc in CRASH_CODES


def _set_aside(cell: Path, attempt: int) -> Path:
    target = cell.with_name(f"{cell.name}.attempt{attempt}")
    shutil.rmtree(target, ignore_errors=True)
    cell.rename(target)
    return target


def run_with_retries(host: PluginHost, provider: Provider, request: CellRequest, *,
                     say: Callable[[str], None]) -> CellOutcome:
    """Run the cell; retry a crash at most twice; drop a rejected dtype filter once."""
    cell = Path(request.out_dir)
    codes: list[int] = []
    notes: list[str] = []
    while True:
        label = f"{request.op.op} {request.side}"
        outcome = run_cell(host, provider, request, say=prefixed(say, f"{label}: "))
        codes.append(outcome.rc)
        attempt = len(codes)
        if outcome.ok:
            break
        if request.op.dtypes and provider.rejected_dtypes(outcome.cell_dir):
            say(f"{request.op.op} {request.side}: the benchmark rejects dtypes "
                f"{','.join(request.op.dtypes)}; running it again without the dtype filter")
            notes.append("dtype_fallback")
            request = attrs.evolve(request, op=attrs.evolve(request.op, dtypes=()))
            _set_aside(cell, attempt)
            continue
        retries = attempt - 1 - notes.count("dtype_fallback")
        if not crashed(outcome) or retries >= MAX_RETRIES or (len(codes) > 1 and codes[-2] == codes[-1]):
            break
        say(f"{request.op.op} {request.side}: crashed (rc={outcome.rc}); retry {retries + 1} of "
            f"{MAX_RETRIES}, earlier attempt kept in {cell.name}.attempt{attempt}")
        _set_aside(cell, attempt)
    if len(codes) > 1:
        caliber.merge_identity(cell, {"attempts": codes, "retry_notes": notes})
    return outcome
