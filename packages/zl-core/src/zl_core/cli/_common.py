"""Argument groups and resolution shared by the commands that run cells."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from zl_core.backend import Backend
from zl_core.errors import NoDeviceError, UsageError
from zl_core.host import PluginHost
from zl_core.provider import Provider

BACKEND_ENV = "ZL_BACKEND"
FLAGGEMS_ENV = "FLAGGEMS_DIR"
RUNS_ROOT_ENV = "ZL_RUNS_ROOT"

_N = TypeVar("_N", int, float)


def _number(text: str, convert: Callable[[str], _N], what: str,
            out_of_range: Callable[[_N], bool], bound: str) -> _N:
    """``convert(text)``, refused (as argparse wants) when it is not ``what`` or
    when ``out_of_range(value)``; ``bound`` then says what was expected."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if out_of_range(value):
        shown = value if isinstance(value, int) else f"{value:g}"
        raise argparse.ArgumentTypeError(f"expected {bound}, got {shown}")
    return value


def positive_int(text: str) -> int:
    return _number(text, int, "a whole number", lambda v: v < 1, "a number >= 1")


def positive_float(text: str) -> float:
    return _number(text, float, "a number", lambda v: v <= 0, "a number > 0")


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
                   "(default: the backend's own compiler switch)")
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
    p.add_argument("--suite", choices=None, help="benchmark provider: builtin (default without a "
                   "FlagGems checkout) or flaggems")
    p.add_argument("--flaggems-dir", type=Path, help=f"FlagGems checkout (default: ${FLAGGEMS_ENV}); selects the flaggems suite")


def add_measure_args(p: argparse.ArgumentParser, *, default_timeout: float) -> None:
    g = p.add_argument_group("measurement")
    g.add_argument("--shape-file", type=Path, help="YAML of shapes keyed by op name")
    g.add_argument("--shapes", choices=("file", "upstream"), default="file",
                   help="upstream: the provider's own shapes at --level (default: file, or the provider's file)")
    g.add_argument("--level", choices=("core", "comprehensive"), default="core")
    g.add_argument("--timer", choices=("auto", "graph", "direct"), default="auto",
                   help="auto: graph capture where the backend supports it")
    g.add_argument("--direct-repeat", type=positive_int, default=1, metavar="N",
                   help="median of N direct-timed calls")
    g.add_argument("--shared-tuner-cache", action="store_true",
                   help="let the tuner read and write the user's persistent cache (default: isolated)")
    g.add_argument("--timeout", type=positive_float, default=default_timeout, metavar="SECONDS",
                   help=f"per-cell timeout (default {default_timeout:g})")
    g.add_argument("--python", default=sys.executable,
                   help="interpreter that runs the cells (default: this one)")
    g.add_argument("--compile-only", action="store_true",
                   help="no device: compile the suite's kernels for --target and compare TTGIR")
    g.add_argument("--target", default=None, help="compile-only target, e.g. cuda:90 (default)")


def add_campaign_args(p: argparse.ArgumentParser, *, default_timeout: float) -> None:
    """What a campaign of switch-flipped cell pairs takes (zl screen, zl ab): the switch,
    the suite, the backend, the measurement and where the campaign goes."""
    add_switch_args(p)
    add_suite_args(p)
    add_backend_args(p)
    add_measure_args(p, default_timeout=default_timeout)
    p.add_argument("--runs-root", type=Path, help="where campaigns go (default: $ZL_RUNS_ROOT or ./runs)")


def resolve_backend(host: PluginHost, name: str | None, *, compile_target: str | None = None) -> Backend:
    wanted = name or os.environ.get(BACKEND_ENV)
    if wanted:
        return host.get_backend(wanted)
    backends = host.backends()
    if not backends:
        raise UsageError("no backend is installed; pip install a zl-backend-* package "
                         "(e.g. zl-backend-cuda) and see 'zl backends'")
    if len(backends) == 1:
        return backends[0]
    if compile_target:
        return host.get_backend(compile_target.split(":", 1)[0])
    # Ask each vendor's own tool first: torch namespaces are shared between
    # backends (ROCm builds expose torch.cuda), so a torch count cannot tell them apart.
    probed = [b for b in backends if host.probe_devices(b)]
    if len(probed) == 1:
        return probed[0]
    names = ", ".join(b.name for b in backends)
    if not probed and not any(host.enumerate_devices(b) for b in backends):
        raise NoDeviceError(
            f"no device found by any installed backend ({names}); to compare generated code "
            "without a device run an IR-only screen: zl screen --compile-only --target cuda:90 "
            "(nox -s screen -- --compile-only), or name a backend with --backend")
    raise UsageError(f"several backends are installed ({names}); pick one with --backend "
                     f"or ${BACKEND_ENV}")


def resolve_suite(host: PluginHost, args: argparse.Namespace) -> tuple[Provider, str | None]:
    """(provider, source): --flaggems-dir / FLAGGEMS_DIR select FlagGems, else builtin."""
    flaggems_dir = getattr(args, "flaggems_dir", None) or os.environ.get(FLAGGEMS_ENV) or None
    suite = getattr(args, "suite", None)
    if suite is None:
        suite = "flaggems" if flaggems_dir else "builtin"
    provider = host.get_provider(suite)
    if suite == "flaggems":
        if not flaggems_dir:
            raise UsageError("the flaggems suite needs a checkout: pass --flaggems-dir DIR "
                             f"or set ${FLAGGEMS_ENV}")
        return provider, str(Path(flaggems_dir).expanduser().resolve())
    return provider, None


def resolve_device(host: PluginHost, backend: Backend, device: str | None, *,
                   compile_only: bool, what: str) -> str | None:
    if compile_only:
        return None
    if device is not None:
        return str(device)
    devices = host.enumerate_devices(backend)
    if not devices:
        raise NoDeviceError(
            f"no {backend.name} device found on this machine; to compare generated code "
            f"without a device run an IR-only screen: {what} --compile-only --target cuda:90")
    return devices[0]


def check_compile_only(args: argparse.Namespace, provider: Provider) -> None:
    if args.compile_only and not getattr(provider, "supports_compile_only", False):
        raise UsageError(f"--compile-only works with the builtin suite only (the {provider.name} "
                         "suite needs a device to build its inputs); drop --flaggems-dir/--suite")
    if args.target and not args.compile_only:
        raise UsageError("--target only applies with --compile-only")
    if args.compile_only and not args.target:
        args.target = "cuda:90"


def runs_root(value: Path | None) -> Path:
    return Path(value or os.environ.get(RUNS_ROOT_ENV) or "runs").expanduser().resolve()


def resolve_devices(host: PluginHost, backend: Backend, spec: str, *, what: str) -> list[str]:
    """``all`` or ``0,1,...`` as physical device ids; ids outside a visibility mask are refused."""
    if spec.strip().lower() == "all":
        devices = host.enumerate_devices(backend)
        if not devices:
            raise NoDeviceError(f"no {backend.name} device found on this machine for {what} "
                                "--devices all; name them with --devices 0,1,...")
        return devices
    devices = [d.strip() for d in spec.split(",") if d.strip()]
    if not devices:
        raise UsageError(f"--devices {spec!r} names no device; give all or a list such as 0,1")
    repeated = sorted({d for d in devices if devices.count(d) > 1})
    if repeated:
        raise UsageError(f"--devices names {', '.join(repeated)} twice; a device is one lane")
    mask = host.visibility_mask(backend)
    outside = [d for d in devices if mask is not None and d not in mask]
    if outside:
        raise UsageError(f"device(s) {', '.join(outside)} are hidden by the visibility mask "
                         f"({', '.join(mask or [])}); devices are physical ids, pick among those")
    return devices
