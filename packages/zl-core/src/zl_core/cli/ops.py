"""``zl ops``: the operators a suite offers, with their benchmark files and dtypes.

    zl ops                        # the built-in suite (or FlagGems when FLAGGEMS_DIR is set)
    zl ops --flaggems-dir DIR     # a FlagGems checkout
    zl ops --suite builtin --json
"""

from __future__ import annotations

import argparse
import json

from zl_core.app.resolve import resolve_suite
from zl_core.cli import _common
from zl_core.host import plugin_host

COLUMNS = ("op", "op_file", "dtypes", "kinds")


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="list a suite's operators, benchmark files and dtypes",
                       description="List the operators a benchmark suite offers; give them to "
                       "--ops as op:op_file:dtype,dtype.")
    _common.add_suite_args(p)
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of {op, op_file, dtypes, kinds}")
    p.set_defaults(handler=run)


def _cells(info) -> tuple[str, str, str, str]:
    return (info.op, info.op_file, ",".join(info.dtypes) or "-", ",".join(info.kinds) or "-")


def run(args: argparse.Namespace) -> int:
    host = plugin_host()
    where = _common.where_from(args)
    provider, source = resolve_suite(host, where.suite, where.source)
    ops = provider.list_ops(source)
    if args.json:
        print(json.dumps([o.to_json() for o in ops], indent=2))
        return 0
    where = source or "packaged with the provider"
    print(f"suite {provider.name}: {len(ops)} operator(s) ({where})")
    if not ops:
        return 0
    rows = [COLUMNS] + [_cells(o) for o in ops]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0
