"""``zl telemetry``: sample a backend's clocks, temperature, power and utilisation as TSV."""

from __future__ import annotations

import argparse
import logging
import sys
from time import sleep

from zl_core.app import plugin_host
from zl_core.app.devices import TELEMETRY_HEADER, telemetry_sampler
from zl_core.app.resolve import BACKEND_ENV
from zl_core.cli import _common

DEFAULT_INTERVAL_S = 5.0

log = logging.getLogger(__name__)


def add_parser(sub) -> None:
    p = sub.add_parser("telemetry", help="sample device clocks, temperature, power and use as TSV",
                       description="Run the backend's telemetry sampler every --interval seconds "
                                   "and print one tab-separated row per device. A missing or "
                                   "failing sampler is reported on stderr and is not an error.")
    p.add_argument("--backend", help=f"backend name or alias (default: ${BACKEND_ENV}, "
                                     "or the only one installed)")
    p.add_argument("--device", help="device to sample (default: the one device the backend's "
                                    "visibility variable names; every device when it names "
                                    "none or several)")
    p.add_argument("--interval", type=_common.interval, default=DEFAULT_INTERVAL_S,
                   metavar="SECONDS", help=f"seconds between samples (default {DEFAULT_INTERVAL_S:g})")
    p.add_argument("--once", action="store_true", help="take one sample and exit")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    sampler = telemetry_sampler(plugin_host(), args.backend, args.device)
    said: set[str] = set()

    def sample() -> list[dict[str, str]]:
        taken = sampler.take()
        if taken.passed_over and taken.passed_over not in said:  # a library passed over: once
            said.add(taken.passed_over)
            log.warning("zl telemetry: %s", taken.passed_over)
        if not taken.rows:
            log.warning("zl telemetry: %s", taken.reason)
        return taken.rows

    try:
        rows = sample()
        if not rows:
            # Nothing to show (the reason is on stderr): leave stdout empty so that no
            # file ever looks sampled when it is not.
            return 0
        print(TELEMETRY_HEADER)
        while True:
            for line in sampler.lines(rows):
                print(line)
            sys.stdout.flush()
            if args.once:
                return 0
            sleep(args.interval)
            rows = sample()  # a transient failure mid-run is noted and sampling goes on
    except KeyboardInterrupt:
        return 0
