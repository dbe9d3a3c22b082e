"""Argument groups shared by the commands, the records they fill, and report output.

What the arguments mean is decided in :mod:`zl_core.app`; this module only spells
them for argparse.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from zl_core.app import CANARY_CHOICES, OTHER_PROCESS_CHOICES
from zl_core.app.options import Lanes, Measurement, SwitchChoice, Where
from zl_core.app.reports import render
from zl_core.app.resolve import BACKEND_ENV
from zl_core.foundation import console
from zl_core.foundation.errors import EXIT_FAILED, BadInputError
from zl_core.interface import contract

_N = TypeVar("_N", int, float)

log = logging.getLogger(__name__)


def _number(text: str, convert: Callable[[str], _N], what: str,
            out_of_range: Callable[[_N], bool], bound: str) -> _N:
    """``convert(text)``, refused (as argparse wants) when it is not ``what`` or
    when ``out_of_range(value)``; ``bound`` then says what was expected."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        # nan compares false with every bound: "--timeout nan" would mean no timeout.
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    if out_of_range(value):
        shown = value if isinstance(value, int) else f"{value:g}"
        raise argparse.ArgumentTypeError(f"expected {bound}, got {shown}")
    return value


def positive_int(text: str) -> int:
    return _number(text, int, "a whole number", lambda v: v < 1, "a number >= 1")


#: More rounds than this is a typo, not a campaign (1,000 rounds of one operator's two
#: cells at 20 s each is 11 hours).
MAX_ROUNDS = 1000
#: Bounds past which a number is a typo, not a setting (an interval of 1e308 s is a
#: sleep the platform cannot even represent; a million cells per device a fork bomb).
MAX_SECONDS = 7 * 24 * 3600.0  # a timeout or a wait: a week
MAX_INTERVAL_S = 3600.0  # a telemetry interval: an hour
MAX_REPLAY_MS = 60_000.0  # device time of one graph replay: a minute
MAX_PER_DEVICE = 64  # cells measuring at once on one device
MAX_PIPELINE = 8  # A/B cells of one device in flight: more only waits for the gate
MAX_REPEAT = 10_000  # direct-timed calls per measurement


def _upto(kind: Callable[[str], float], limit: float, unit: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = kind(text)
        if value > limit:
            shown = value if isinstance(value, int) else f"{value:g}"
            raise argparse.ArgumentTypeError(f"expected at most {limit:g} {unit}, got {shown}")
        return value
    return parse


seconds = _upto(lambda t: positive_float(t), MAX_SECONDS, "seconds (a week)")
seconds_or_zero = _upto(lambda t: non_negative_float(t), MAX_SECONDS, "seconds (a week)")
interval = _upto(lambda t: positive_float(t), MAX_INTERVAL_S, "seconds")
interval_or_zero = _upto(lambda t: non_negative_float(t), MAX_INTERVAL_S, "seconds")
replay_ms = _upto(lambda t: positive_float(t), MAX_REPLAY_MS, "ms")
per_device = _upto(lambda t: positive_int(t), MAX_PER_DEVICE, "cells per device")
pipeline = _upto(lambda t: positive_int(t), MAX_PIPELINE, "cells in flight per device")
repeat = _upto(lambda t: positive_int(t), MAX_REPEAT, "calls")


def round_count(text: str) -> int:
    """A number of rounds: a whole number from 1 to :data:`MAX_ROUNDS`."""
    return _number(text, int, "a whole number", lambda v: not 1 <= v <= MAX_ROUNDS,
                   f"a number from 1 to {MAX_ROUNDS}")


def positive_float(text: str) -> float:
    return _number(text, float, "a number", lambda v: v <= 0, "a number > 0")


def non_negative_float(text: str) -> float:
    return _number(text, float, "a number", lambda v: v < 0, "a number >= 0")


def percentage(text: str) -> float:
    """A percentage >= 0 (a threshold)."""
    return _number(text, float, "a percentage", lambda v: v < 0, "a percentage >= 0")


def env_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not name.replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def add_switch_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("switch")
    g.add_argument("--switch", help="environment variable that differs between the sides "
                   "(default: the backend's own compiler switch; none when only --a-env/--b-env "
                   "are given)")
    g.add_argument("--a", dest="a_value", help="side A value (default 0)")
    g.add_argument("--b", dest="b_value", help="side B value (default 1)")
    g.add_argument("--a-env", action="append", type=env_pair, default=[], metavar="NAME=VALUE",
                   help="extra variable for side A only (repeatable)")
    g.add_argument("--b-env", action="append", type=env_pair, default=[], metavar="NAME=VALUE",
                   help="extra variable for side B only (repeatable)")
    g.add_argument("--force-switch", action="store_true",
                   help="run even when the cells' compiler does not read the switch (it is "
                   "asked before any cell runs)")


def add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", help=f"backend name or alias (default: ${BACKEND_ENV}, or the only one installed)")
    p.add_argument("--device", help="device index (default: the first the backend finds)")


def add_suite_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", choices=None, help="benchmark suite: builtin or one a plugin adds "
                   "(default: the suite that runs from checkouts when --source or its variable "
                   "gives one, else builtin)")
    # --flaggems-dir: the spelling this option had first, kept so that scripts and
    # configuration files written with it go on working.
    p.add_argument("--source", "--flaggems-dir", dest="source", action="append", metavar="[NAME=]PATH",
                   help="checkout of the suite's benchmarks (default: the checkout variable its "
                   "provider names); selects the suite that runs from checkouts. Give it again for "
                   "a further checkout: its operators are then named NAME:op (NAME defaults to "
                   "what the provider calls that checkout)")


def add_measure_args(p: argparse.ArgumentParser, *, default_timeout: float,
                     default_replay_ms: float = contract.DEFAULT_REPLAY_MS,
                     default_timing: str = "full", default_start: str = "cold",
                     compile_only: bool = True,
                     timings: tuple[str, ...] = contract.TIMINGS) -> None:
    """``compile_only=False``: --compile-only and --target are taken but not shown (zl ab
    refuses them with a reason). ``timings``: the --timing choices (zl ab's rounds add a
    plan, contract.TIMING_PLANS)."""
    g = p.add_argument_group("measurement")
    g.add_argument("--shape-file", type=Path, help="YAML of shapes keyed by op name")
    g.add_argument("--shapes", choices=("file", "upstream"), default="file",
                   help="upstream: the provider's own shapes at --level (default: file, or the provider's file)")
    g.add_argument("--level", choices=("core", "comprehensive"), default="core",
                   help="the benchmark level the suite's benchmarks run at (default core)")
    g.add_argument("--timer", choices=("auto", "graph", "direct"), default="auto",
                   help="auto: graph capture where the backend supports it")
    g.add_argument("--direct-repeat", type=repeat, default=1, metavar="N",
                   help="median of N direct-timed calls")
    g.add_argument("--replay-ms", type=replay_ms, default=default_replay_ms,
                   metavar="MS", help="device time of one of the ten graph replays per "
                   f"measurement (default {default_replay_ms:g}; see docs/statistics.md)")
    g.add_argument("--l2", choices=contract.L2_MODES, default=contract.DEFAULT_L2,
                   help="the L2 cache each graph-timed call finds: warm, what the calls before it "
                   "left (as Triton's do_bench_cudagraph); flush, cleared by a write before every "
                   "call, whose time is measured apart and subtracted (as Triton's do_bench "
                   f"clears it). A caliber field (default {contract.DEFAULT_L2}; see docs/caliber.md)")
    once = (f"; {contract.REFERENCE_ONCE}: the reference in round 1's cells only, the "
            "operator alone in later rounds" if contract.REFERENCE_ONCE in timings else "")
    g.add_argument("--timing", choices=timings, default=default_timing,
                   help="full: time the reference (torch) too, as the suite does by itself; "
                   f"operator: the operator alone, what verdicts read{once} (default {default_timing})")
    g.add_argument("--shared-tuner-cache", action="store_true",
                   help="let the tuner read and write the user's persistent cache (default: isolated)")
    g.add_argument("--timeout", type=seconds, default=default_timeout, metavar="SECONDS",
                   help=f"per-cell timeout (default {default_timeout:g})")
    g.add_argument("--stall-timeout", type=seconds_or_zero,
                   default=contract.DEFAULT_STALL_TIMEOUT_S, metavar="SECONDS",
                   help="end a cell as STALLED after this long without output or progress, "
                   "with its Python stacks in stacks.txt "
                   f"(default {contract.DEFAULT_STALL_TIMEOUT_S:g}; 0: never)")
    g.add_argument("--lock-timeout", type=seconds_or_zero,
                   default=contract.DEFAULT_LOCK_TIMEOUT_S, metavar="SECONDS",
                   help="how long a cell waits for a device another zl process holds, saying so "
                   f"every minute, before the command ends with exit 7 (default "
                   f"{contract.DEFAULT_LOCK_TIMEOUT_S:g}; 0: for ever)")
    g.add_argument("--compile-workers", type=positive_int, default=0, metavar="N",
                   help="threads that compile an autotune sweep's candidate configs before the "
                   "sweep times them, one after the other as always (default: the host's cores, "
                   f"at most {contract.COMPILE_WORKERS_CAP}; 1: no pool)")
    g.add_argument("--sweep-devices", default="", metavar="LIST",
                   help="shard each recording cell's autotune sweep over these devices (all, or "
                   "0,1,...), then measure on the cell's own device, alone; if a shard fails the "
                   "cell sweeps serially and says SWEEP_SHARD_FALLBACK (default: none)")
    g.add_argument("--start", choices=contract.STARTS, default=default_start,
                   help="cold: each cell a new interpreter; warm: each cell forked from one that "
                   "imported the suite's heavy modules (torch, triton) once, where nothing those "
                   f"imports read differs between cells (default {default_start}; see docs/campaigns-at-scale.md)")
    g.add_argument("--python", default=sys.executable,
                   help="interpreter that runs the cells (default: this one)")
    g.add_argument("--compile-only", action="store_true",
                   help="no device: compile the suite's kernels for --target, dump their TTGIR and "
                   "time nothing (the builtin suite)" if compile_only else argparse.SUPPRESS)
    g.add_argument("--target", default=None, help="compile-only target, <kind>:<arch> as the "
                   "backend writes it (default: the backend's default target; zl backends lists "
                   "each one's)" if compile_only else argparse.SUPPRESS)


def add_campaign_args(p: argparse.ArgumentParser, *, default_timeout: float,
                      default_replay_ms: float = contract.DEFAULT_REPLAY_MS,
                      default_timing: str = "full", default_start: str = "cold",
                      compile_only: bool = True,
                      timings: tuple[str, ...] = contract.TIMINGS) -> None:
    """What a campaign of switch-flipped cell pairs takes (zl screen, zl ab): the switch,
    the suite, the backend, the measurement and where the campaign goes."""
    add_switch_args(p)
    add_suite_args(p)
    add_backend_args(p)
    add_measure_args(p, default_timeout=default_timeout, default_replay_ms=default_replay_ms,
                     default_timing=default_timing, default_start=default_start,
                     compile_only=compile_only, timings=timings)
    p.add_argument("--runs-root", type=Path, help="where campaigns go (default: $ZL_RUNS_ROOT or ./runs)")
    p.add_argument("--replay-root", type=Path, default=None, metavar="SCREEN",
                   help="an earlier screen campaign: every cell replays the autotune configs its "
                   "side A recorded for the operator, and no cell records (each operator needs "
                   "a finished, recording side A there)")
    g = p.add_argument_group("lanes, hosts and resuming")
    g.add_argument("--devices", metavar="all|0,1,...",
                   help="run operators on these devices at once, one lane each (physical ids)")
    g.add_argument("--scheduler", metavar="tcp://HOST:8786",
                   help="run operators on the lanes of 'zl worker' processes (pip install 'zl-core[dask]')")
    g.add_argument("--canary", choices=CANARY_CHOICES, default="auto",
                   help="run the plan's first operator of each lane before the rest; if one "
                   "fails, stop before the rest is spent (exit 6). auto: for a frozen campaign, "
                   "or one of more than 4 operators per lane (default auto)")
    g.add_argument("--other-processes", choices=OTHER_PROCESS_CHOICES, default="refuse",
                   help="another process on a device (as its vendor's tool lists them): refuse "
                   "to start, naming it (exit 7), or record it in campaign.json as a condition "
                   "and run (default refuse)")
    g.add_argument("--resume", type=Path, metavar="CAMPAIGN",
                   help="continue an interrupted campaign with its own arguments "
                   "(only --devices/--scheduler may change)")


def add_manifest_arg(p: argparse.ArgumentParser) -> None:
    """``--manifest``; its help names the options of this command that a frozen matrix still
    takes from the command line (``app.seal.MAY_GIVE`` is the rule; added before the
    config options, which the help leaves out)."""
    from zl_core.app.seal import flags_beside_a_manifest

    own = {flag for action in p._actions for flag in action.option_strings}
    kept = [flag for flag in flags_beside_a_manifest() if flag in own]
    listed = ", ".join(kept[:-1]) + f" and {kept[-1]}" if len(kept) > 1 else "".join(kept)
    p.add_argument("--manifest", type=Path, metavar="DIR",
                   help="run a campaign frozen by 'zl freeze' (its folder): every precondition is "
                   f"checked before any cell, and the frozen matrix decides every other option but {listed}")


def lanes_from(args: argparse.Namespace) -> Lanes:
    return Lanes(devices=args.devices, scheduler=args.scheduler, resume=args.resume,
                 per_device=getattr(args, "per_device", 1), pipeline=getattr(args, "pipeline", 1),
                 canary=args.canary,
                 other_processes=args.other_processes)


def failed_exit(failed: tuple[str, ...] | list[str], command: str) -> int:
    """0, or EXIT_FAILED naming the operators whose cells failed."""
    if not failed:
        return 0
    print(f"zl {command}: {len(failed)} operator(s) failed: {', '.join(failed)} "
          f"(exit {EXIT_FAILED}; their run.log says why)", file=sys.stderr)
    return EXIT_FAILED


def where_from(args: argparse.Namespace) -> Where:
    device = getattr(args, "device", None)
    return Where(suite=getattr(args, "suite", None),
                 source=args.source[0] if args.source else None,
                 more_sources=tuple(args.source[1:]) if args.source else (),
                 backend=getattr(args, "backend", None),
                 device=None if device is None else str(device))


def measurement_from(args: argparse.Namespace) -> Measurement:
    return Measurement(python=args.python, shape_file=args.shape_file, shapes=args.shapes,
                       level=args.level, timer=args.timer, direct_repeat=args.direct_repeat,
                       replay_ms=args.replay_ms, l2=args.l2, timing=args.timing,
                       shared_tuner_cache=args.shared_tuner_cache, timeout_s=args.timeout,
                       stall_timeout_s=args.stall_timeout, start=args.start,
                       lock_timeout_s=args.lock_timeout, compile_workers=args.compile_workers,
                       sweep_devices=args.sweep_devices, compile_only=args.compile_only, target=args.target,
                       replay_root=getattr(args, "replay_root", None),  # zl run has --replay-from
                       gate_release=getattr(args, "gate_release", "exit"))  # zl ab's pipeline only


def switch_from(args: argparse.Namespace) -> SwitchChoice:
    return SwitchChoice(switch=args.switch, a_value=args.a_value, b_value=args.b_value,
                        a_env=tuple(args.a_env), b_env=tuple(args.b_env),
                        force=args.force_switch)


def show_report(model: dict, command: str, *, fmt: str = "text", out: Path | None = None,
                link: str | None = None) -> None:
    """Log the caliber problems allowed and the warnings (stderr), then print the report
    (stdout) or write it to ``out``; text is coloured as ``--color`` says
    (:func:`zl_core.foundation.console.wants_color`: by default, on a terminal only)."""
    for problem in model["caliber_problems"]:
        log.warning("zl %s: caliber mismatch (allowed by --allow-caliber-mismatch): %s", command, problem)
    for warning in model["caliber_warnings"]:
        log.warning("zl %s: caliber warning: %s", command, warning)
    color = fmt == "text" and console.wants_color(sys.stdout if out is None else None)
    with console.rich_agrees(color):
        text = render(model, fmt, color=color, link=link)
    text = text if text.endswith("\n") else text + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot write {out}: {exc.strerror}; check the path") from None
    log.info("zl %s: wrote %s", command, out)
