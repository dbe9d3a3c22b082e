"""``zl doctor``: what can this machine and interpreter do, and what is missing?

Each check prints ``ok``, ``note`` (worth knowing, not blocking) or ``problem``
(blocks what it is needed for). Then the three things zl does are judged: the
IR-only screen (triton alone, no device), timed cells (torch, a device) and
telemetry beside them (the vendor's sampler), each with what its missing pieces
would add. Exit 0 when the IR-only screen or timed cells can run, 2 when neither
can. torch and triton are probed in a child process of this interpreter, so a
broken vendor build cannot crash zl itself.
"""

from __future__ import annotations

import argparse
import sys

from zl_core.app import plugin_host
from zl_core.app.doctor import doctor
from zl_core.app.resolve import BACKEND_ENV
from zl_core.foundation.errors import EXIT_OK, EXIT_USAGE


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="check that a backend is usable from this interpreter",
                       description="Check the backend, this interpreter's torch and triton, the "
                                   "devices and the telemetry sampler, then say what this machine "
                                   "can do (IR-only screen, timed cells, telemetry) and what each "
                                   "missing piece would add. Exit 0 when the IR-only screen or "
                                   "timed cells can run, 2 when neither can.")
    p.add_argument("--backend", help=f"backend name or alias (default: ${BACKEND_ENV}, "
                                     "or the only one installed)")
    p.add_argument("--python", default=sys.executable,
                   help="interpreter to check (default: this one)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    outcome = doctor(plugin_host(), args.backend, args.python)
    width = max(len(c.name) for c in outcome.checks)
    for c in outcome.checks:
        print(f"{c.status:<8} {c.name:<{width}}  {c.detail}")
    print("\nwhat this machine can do:")
    width = max(len(c.name) for c in outcome.capabilities)
    for cap in outcome.capabilities:
        print(f"  {'yes' if cap.ready else 'no':<4} {cap.name:<{width}}  {cap.detail}")
    if not outcome.usable:
        problems = outcome.problems
        print(f"not usable: neither the IR-only screen nor timed cells can run "
              f"({len(problems)} problem(s): {', '.join(problems) or 'see above'})")
        return EXIT_USAGE
    print(f"usable: {', '.join(c.name for c in outcome.capabilities if c.ready)}")
    return EXIT_OK
