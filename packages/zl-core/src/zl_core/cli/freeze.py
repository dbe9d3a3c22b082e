"""``zl freeze``: check a campaign manifest against the suite and the real tree, print the
plan and its estimated device time, and freeze it into an immutable task matrix.

    zl freeze campaign.yaml --dry-run        # check and estimate; write nothing
    zl freeze campaign.yaml --out frozen/    # freeze (a new or empty folder)
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from zl_core.app import duration, plugin_host, seal
from zl_core.foundation.errors import UsageError

log = logging.getLogger(__name__)


def add_parser(sub) -> None:
    p = sub.add_parser("freeze", help="check a campaign manifest and freeze its task matrix",
                       description="Check a manifest (docs/sealed-campaigns.md) against the suite's "
                       "inventory and the real tree, print the plan and its estimated device time, "
                       "and freeze it into an immutable task matrix bound to it by SHA-256.")
    p.add_argument("manifest", type=Path, help="the manifest (YAML)")
    p.add_argument("--out", type=Path, metavar="DIR", help="where to freeze (a new or empty folder)")
    p.add_argument("--dry-run", action="store_true", help="check and estimate only; write nothing")
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter the cells run (default: this one); its Triton and the "
                   "suite's library are bound by path")
    p.add_argument("--runs-root", type=Path, default=None,
                   help="where this host's earlier campaigns are, for the estimate (default ./runs)")
    p.set_defaults(handler=run)


def _seconds(value: float | None) -> str:
    if value is None:
        return "unknown (no earlier cell of these operators on this host)"
    return duration(value)


def run(args: argparse.Namespace) -> int:
    if not args.dry_run and args.out is None:
        raise UsageError("give --out DIR to freeze, or --dry-run to check and estimate only")
    outcome = seal.freeze_manifest(plugin_host(), args.manifest, args.out, dry_run=args.dry_run,
                                   python=args.python, runs=args.runs_root)
    m = outcome.matrix
    where = f"IR-only for {m.target}" if m.compile_only else f"{m.backend} device {m.device}"
    name, a_value, b_value = m.switch
    print(f"campaign {m.campaign}: suite {m.suite}, {where}, switch {name} "
          f"(A={a_value} B={b_value}), rounds {m['rounds']}")
    for source in m.sources:
        print(f"  source {source['name']}: {source['path']} at {source['commit']}")
    print(f"  zl {m.zl_version}, {len(m.zl_files)} files, sha256 {m.zl_files_sha256[:16]}")
    for module, origin in m.imports.items():
        print(f"  {module} from {origin}")
    for line in seal.shown_compiler(m):
        print(f"  {line}")
    for task in m.tasks:
        dtypes = ",".join(task.dtypes) or "every dtype"
        note = f"  ({task.reason})" if task.reason else ""
        print(f"  {task.ordinal:>3}. {task.op} [{task.op_file}] {dtypes}, timeout "
              f"{task.timeout_s:g}s, {len(task.files)} file(s) bound{note}")
        if task.check is not None:
            count = task.check_tests
            print(f"       accuracy tests: {seal.shown_check(task.check)}"
                  + (f", {count} test(s)" if count is not None else "")
                  + (f"  ({task.check_why})" if task.check_why else ""))
        elif m.correctness:
            print(f"       accuracy tests: not run ({task.check_why})")
    extra = [f"{sum(1 for t in m.tasks if t.check) * 2} accuracy-test cell(s)"] if m.correctness else []
    if m.control_env:
        extra.append(f"{len(m.tasks)} control cell(s)")
    print(f"estimated device time: screen {_seconds(outcome.screen.total_s)}, A/B rounds "
          f"{_seconds(outcome.rounds.total_s)}"
          + (f"; not in the estimate (no history of them): {', '.join(extra)}" if extra else ""))
    if outcome.out is None:
        log.info("zl freeze: dry run, nothing written")
    else:
        print(f"frozen: {outcome.out}")  # the result: where the matrix is
    return 0
