"""Sealed campaigns as functions: freeze a manifest (or only plan it), and check a frozen
folder's preconditions before a campaign runs it."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs

from zl_core.campaigns.estimate import Estimate, estimate, history
from zl_core.campaigns.state import option_flag
from zl_core.errors import UsageError
from zl_core.host import PluginHost
from zl_core.seal import freeze, preconditions

from .lanes import _flat, options_json
from .resolve import runs_root


@attrs.frozen(kw_only=True)
class FreezeOutcome:
    matrix: dict
    screen: Estimate  # the screen's two cells per workload
    rounds: Estimate  # the A/B rounds' two cells per round per workload
    out: Path | None  # None: a dry run, nothing written


def freeze_manifest(host: PluginHost, manifest: Path, out: Path | None, *, dry_run: bool = False,
                    python: str = sys.executable, runs: Path | None = None) -> FreezeOutcome:
    """Check ``manifest`` against the suite and the tree, estimate its device time from
    this host's earlier campaigns, and (unless ``dry_run``) freeze it under ``out``."""
    frozen = freeze.plan(host, manifest, python=python)
    root = runs_root(runs)
    ops = [task["op"] for task in frozen.matrix["tasks"]]
    compile_only = bool(frozen.matrix["compile_only"])
    seen, read = history(root, "screen", compile_only=compile_only)
    screen = estimate(ops, seen, sides=2, lanes=1, campaigns_read=read)
    rounds = frozen.matrix["rounds"] if isinstance(frozen.matrix["rounds"], int) else frozen.matrix["max_rounds"]
    seen, read = history(root, "ab", compile_only=False)
    ab = estimate(ops, seen, sides=2 * rounds, lanes=1, campaigns_read=read)
    written = None if dry_run else freeze.write(frozen, out)
    return FreezeOutcome(matrix=frozen.matrix, screen=screen, rounds=ab, out=written)


def check_frozen(host: PluginHost, frozen_dir: Path, *, python: str | None = None) -> dict:
    """The frozen matrix once every precondition holds (SealBrokenError names each broken one)."""
    return preconditions.check(host, frozen_dir, python=python)


#: What a run of a frozen matrix still takes from the command line: where results go.
MAY_GIVE = ("runs_root", "frozen")


def frozen_options(kind: str, frozen_dir: Path, given):
    """``ScreenOptions`` (kind "screen") or ``AbOptions`` ("ab") of the frozen matrix under
    ``frozen_dir``; options given beside ``--manifest`` other than the runs root are
    refused by name (the matrix decides them)."""
    from zl_core.app.options import AbOptions, ScreenOptions, SwitchChoice, Where
    from zl_core.opspec import OpSpec

    cls = ScreenOptions if kind == "screen" else AbOptions
    default = cls()
    flat_given, flat_default = _flat(options_json(given)), _flat(options_json(default))
    differ = sorted({option_flag(name) for name, value in flat_given.items()
                     if name.split(".")[0] not in MAY_GIVE and value != flat_default.get(name)})
    if differ:
        raise UsageError(f"--manifest runs the frozen matrix as it was frozen; drop "
                         f"{', '.join(differ)} (the matrix decides them), or freeze a new manifest")
    matrix, _seal = freeze.read(frozen_dir)
    sources = matrix.get("sources") or []
    default_name = sources[0]["name"] if sources else ""
    ops = tuple(str(OpSpec(op=(f"{t['source']}:" if t["source"] and t["source"] != default_name else "")
                           + t["op"], op_file=t["op_file"], dtypes=tuple(t["dtypes"])))
                for t in matrix["tasks"])
    where = Where(suite=matrix["suite"],
                  source=f"{sources[0]['name']}={sources[0]['path']}" if sources else None,
                  more_sources=tuple(f"{s['name']}={s['path']}" for s in sources[1:]),
                  backend=matrix["backend"], device=matrix["device"])
    base = default.measure
    measure = attrs.evolve(base, python=matrix["python"], timer=matrix["measure"]["timer"],
                           replay_ms=float(matrix["measure"]["replay_ms"]),
                           level=matrix["measure"]["level"],
                           timeout_s=float(matrix["measure"]["timeout_s"]),
                           op_timeouts=tuple(
                               (OpSpec.parse(spec, prefixes=frozenset(s["name"] for s in sources),
                                             default_source=default_name).op, float(t["timeout_s"]))
                               for spec, t in zip(ops, matrix["tasks"])
                               if float(t["timeout_s"]) != float(matrix["measure"]["timeout_s"])),
                           compile_only=bool(matrix["compile_only"]), target=matrix["target"])
    switch = SwitchChoice(switch=matrix["switch"]["name"], a_value=matrix["switch"]["a"],
                          b_value=matrix["switch"]["b"])
    common = {"ops": ops, "where": where, "measure": measure, "switch": switch,
              "runs_root": given.runs_root, "frozen": Path(frozen_dir).resolve()}
    if kind == "screen":
        return ScreenOptions(**common)
    rounds = matrix["rounds"]
    return AbOptions(**common, rounds=rounds if isinstance(rounds, int) else None,
                     max_rounds=int(matrix["max_rounds"]),
                     threshold_pct=float(matrix["threshold_pct"]))




def finish_campaign(campaign: Path) -> Path | None:
    """Once a campaign is complete: write its receipts and, when it ran a frozen matrix,
    seal it (its files read-only). Returns the campaign receipt (None: not complete)."""
    from zl_core.campaigns import state
    from zl_core.campaigns.judging import RULES
    from zl_core.seal import receipts
    from zl_core.status import latest_by_cell, read_status
    from zl_core.store.layout import CampaignLayout
    from zl_core.store.record import ROUNDS_KINDS, read_campaign

    layout = CampaignLayout(Path(campaign))
    meta = read_campaign(layout.root)
    if state.state_of(meta) != state.COMPLETE:
        return None
    cells = sorted({(layout.root / row["cell"]) for row in latest_by_cell(read_status(layout.root)).values()
                    if row.get("cell") and (layout.root / row["cell"]).is_dir()})
    frozen_dir = (meta.get("options") or {}).get("frozen")
    frozen = None
    if frozen_dir:
        matrix, sealed = freeze.read(Path(frozen_dir))
        frozen = {"dir": str(frozen_dir), "campaign": matrix.get("campaign"),
                  "manifest_sha256": sealed.get("manifest_sha256"),
                  "matrix_sha256": sealed.get("matrix_sha256")}
    path = receipts.write(layout, cells, rules=RULES if meta.get("kind") in ROUNDS_KINDS else None,
                          frozen=frozen)
    if frozen is not None:
        receipts.seal(layout)
    return path
