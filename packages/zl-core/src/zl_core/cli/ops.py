"""``zl ops``: the operators a suite offers, with their benchmark files and dtypes.

    zl ops                        # the built-in suite (or FlagGems when FLAGGEMS_DIR is set)
    zl ops --source DIR           # a checkout (FlagGems; --flaggems-dir is the same option)
    zl ops --source DIR --source vllm=DIR2   # two, the second's ops as vllm:op
    zl ops --suite builtin --json
"""

from __future__ import annotations

import argparse
import json

from zl_core.app import plugin_host
from zl_core.app.inventory import suite_ops
from zl_core.cli import _common

COLUMNS = ("op", "op_file", "dtypes", "kinds")


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="list a suite's operators, benchmark files and dtypes",
                       description="List the operators a benchmark suite offers; give them to "
                       "--ops as op:op_file:dtype,dtype.")
    _common.add_suite_args(p)
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of {op, op_file, dtypes, kinds, function, source} "
                   "(source: the checkout's name, null for a suite packaged with its provider; "
                   "skip: the reason of a skip-marked benchmark; dtype_choices: the dtypes a "
                   "filter may name, where the suite's command line restricts them)")
    p.set_defaults(handler=run)


def _cells(op: str, info, choices: tuple[str, ...]) -> tuple[str, str, str, str]:
    # A dtype the command line cannot name runs only unfiltered: shown in parentheses.
    dtypes = ",".join(d if not choices or d in choices else f"({d})" for d in info.dtypes)
    return (op, info.op_file, dtypes or "-", ",".join(info.kinds) or "-")


def run(args: argparse.Namespace) -> int:
    listing = suite_ops(plugin_host(), _common.where_from(args))
    if args.json:
        print(json.dumps([{**info.to_json(), "op": spec.op, "function": info.op,
                           "source": source.name or None,
                           **({"dtype_choices": list(source.dtype_choices)} if source.dtype_choices else {})}
                          for source in listing.sources for spec, info in source.ops], indent=2))
        return 0
    for source in listing.sources:
        label = f"source {source.name} " if len(listing.sources) > 1 else ""
        print(f"suite {listing.suite}: {label}{len(source.ops)} operator(s) "
              f"({source.path or 'packaged with the provider'})")
        if not source.ops:
            continue
        if source.dtype_choices:
            print(f"dtypes a filter may name: {', '.join(source.dtype_choices)}; a dtype in "
                  "parentheses runs only unfiltered, '-' marks dtypes not read from the benchmark file")
        rows = [COLUMNS] + [_cells(spec.op, info, source.dtype_choices) for spec, info in source.ops]
        widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0
