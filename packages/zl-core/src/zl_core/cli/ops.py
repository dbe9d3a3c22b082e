"""``zl ops``: the operators a suite offers, with their benchmark files and dtypes.

    zl ops                        # the built-in suite (or FlagGems when FLAGGEMS_DIR is set)
    zl ops --flaggems-dir DIR     # a FlagGems checkout
    zl ops --flaggems-dir DIR --flaggems-dir vllm=DIR2   # two, the second's ops as vllm:op
    zl ops --suite builtin --json
"""

from __future__ import annotations

import argparse
import json

from zl_core.app.resolve import every_op, resolve_sources, resolve_suite
from zl_core.cli import _common
from zl_core.host import plugin_host

COLUMNS = ("op", "op_file", "dtypes", "kinds")


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="list a suite's operators, benchmark files and dtypes",
                       description="List the operators a benchmark suite offers; give them to "
                       "--ops as op:op_file:dtype,dtype.")
    _common.add_suite_args(p)
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of {op, op_file, dtypes, kinds, function, source} "
                   "(source: the checkout's name, null for a suite packaged with its provider; "
                   "skip: the reason of a skip-marked benchmark)")
    p.set_defaults(handler=run)


def _cells(op: str, info) -> tuple[str, str, str, str]:
    return (op, info.op_file, ",".join(info.dtypes) or "-", ",".join(info.kinds) or "-")


def run(args: argparse.Namespace) -> int:
    host = plugin_host()
    where = _common.where_from(args)
    provider, source = resolve_suite(host, where.suite, where.source)
    sources = resolve_sources(provider, where)
    for _, path in sources.entries:
        provider.check_source(path)  # a missing or foreign checkout: exit 3, not "0 operators"
    listed = [(name, path, every_op(provider, path, "" if sources.is_default(name) else name))
              for name, path in (sources.entries or (("", source),))]
    if args.json:
        print(json.dumps([{**info.to_json(), "op": spec.op, "function": info.op,
                           "source": name or None}
                          for name, path, specs in listed
                          for spec, info in zip(specs, provider.list_ops(path))], indent=2))
        return 0
    for name, path, specs in listed:
        infos = provider.list_ops(path)
        label = f"source {name} " if len(listed) > 1 else ""
        print(f"suite {provider.name}: {label}{len(specs)} operator(s) "
              f"({path or 'packaged with the provider'})")
        if not specs:
            continue
        rows = [COLUMNS] + [_cells(spec.op, info) for spec, info in zip(specs, infos)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0
