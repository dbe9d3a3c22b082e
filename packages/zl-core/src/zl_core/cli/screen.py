"""``zl screen``: does the switch change each operator's TTGIR? One pinned pair per op."""

from __future__ import annotations

import argparse

from zl_core.campaigns.screen_campaign import run_screen
from zl_core.campaigns.settings import CellSettings
from zl_core.cli import _common
from zl_core.errors import UsageError
from zl_core.host import PluginHost, plugin_host
from zl_core.opspec import OpSpec
from zl_core.provider import Provider
from zl_core.switch_check import check_campaign_switch
from zl_core.switches import resolve_sides


def add_parser(sub) -> None:
    p = sub.add_parser("screen", help="screen operators: did the switch change their TTGIR?",
                       description="Per operator: side A records its autotune picks, side B "
                       "replays them with the switch flipped; verdict from TTGIR fingerprints.")
    p.add_argument("--ops", nargs="+", metavar="SPEC",
                   help="op[:op_file[:dtype,dtype...]] ... (default: every op of the suite)")
    _common.add_campaign_args(p, default_timeout=2400.0)
    p.set_defaults(handler=run)


def resolve_ops(provider: Provider, source: str | None, specs: list[str] | None) -> list[OpSpec]:
    if specs:
        ops = [OpSpec.parse(s) for s in specs]
    else:
        ops = [OpSpec(op=i.op, op_file=i.op_file, dtypes=()) for i in provider.list_ops(source)]
        if not ops:
            raise UsageError(f"the {provider.name} suite offers no operators; name them with --ops")
    seen = set()
    for o in ops:
        if o.op in seen:
            raise UsageError(f"operator {o.op!r} named twice in --ops")
        seen.add(o.op)
    return ops


def settings_from(args: argparse.Namespace, source: str | None) -> CellSettings:
    return CellSettings(python=args.python, source=source, shape_file=args.shape_file,
                        shapes=args.shapes, level=args.level, timer=args.timer,
                        direct_repeat=args.direct_repeat,
                        isolate_tuner_cache=not args.shared_tuner_cache, timeout_s=args.timeout,
                        compile_only=args.compile_only, target=args.target)


def common_setup(host: PluginHost, args: argparse.Namespace, what: str):
    provider, source = _common.resolve_suite(host, args)
    _common.check_compile_only(args, provider)
    backend = _common.resolve_backend(host, args.backend, compile_target=args.target)
    device = _common.resolve_device(host, backend, args.device, compile_only=args.compile_only,
                                    what=what)
    return provider, source, backend, device


def run(args: argparse.Namespace) -> int:
    host = plugin_host()
    for spec in args.ops or ():
        OpSpec.parse(spec)  # malformed specs fail before any probing
    provider, source, backend, device = common_setup(host, args, "zl screen")
    sides = resolve_sides(backend, args.switch, args.a_value, args.b_value, args.a_env, args.b_env)
    ops = resolve_ops(provider, source, args.ops)
    check_campaign_switch(provider, sides, backend=backend, python=args.python, target=args.target,
                          switch_given=args.switch, force=args.force_switch)
    print(f"zl screen: switch {sides.switch} (A={sides.a_value} B={sides.b_value}) on "
          f"{backend.name}{'' if device is None else ':' + device}, suite {provider.name}, "
          f"{len(ops)} operator(s)" + (f", IR-only for {args.target}" if args.compile_only else ""))
    campaign, rows = run_screen(host, provider, backend, device, sides, ops,
                                settings_from(args, source), _common.runs_root(args.runs_root))
    width = max(len(r["op"]) for r in rows) if rows else 2
    print(f"\nscreen: {campaign}")
    for r in rows:
        print(f"  {r['op']:<{width}}  {r['verdict']:<11} kernels A/B {r['kernels_a']}/{r['kernels_b']}"
              f"  convert_layout A/B {r['convert_layouts_a']}/{r['convert_layouts_b']}"
              + (f"  ({r['notes']})" if r["notes"] else ""))
    print(f"next: zl report {campaign}" + ("" if args.compile_only else "   then: zl ab --rounds 6"))
    return 0
