"""Sealed campaigns as functions: freeze a manifest (or only plan it), and check a frozen
folder's preconditions before a campaign runs it."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from zl_core.campaigns.estimate import Estimate, estimate, history
from zl_core.campaigns.state import option_flag
from zl_core.foundation.errors import UsageError
from zl_core.interface.provider import CheckSpec
from zl_core.plugins.host import PluginHost
from zl_core.seal import freeze, preconditions
from zl_core.seal.matrix import FrozenMatrix

from .inputs import runs_root
from .lanes import flat_options, options_json


@attrs.frozen(kw_only=True)
class FreezeOutcome:
    matrix: FrozenMatrix
    screen: Estimate  # the screen's two cells per workload
    rounds: Estimate  # the A/B rounds' two cells per round per workload
    out: Path | None  # None: a dry run, nothing written


def freeze_manifest(host: PluginHost, manifest: Path, out: Path | None, *, dry_run: bool = False,
                    python: str = sys.executable, runs: Path | None = None) -> FreezeOutcome:
    """Check ``manifest`` against the suite and the tree, estimate its device time from
    this host's earlier campaigns, and (unless ``dry_run``) freeze it under ``out``."""
    frozen = freeze.plan(host, manifest, python=python)
    root = runs_root(runs)
    ops = [task.op for task in frozen.matrix.tasks]
    compile_only = frozen.matrix.compile_only
    seen, read = history(root, "screen", compile_only=compile_only)
    screen = estimate(ops, seen, sides=2, lanes=1, campaigns_read=read)
    rounds = frozen.matrix.rounds if frozen.matrix.rounds is not None else frozen.matrix.max_rounds
    seen, read = history(root, "ab", compile_only=False)
    ab = estimate(ops, seen, sides=2 * rounds, lanes=1, campaigns_read=read)
    if not dry_run and out is None:
        raise UsageError("give the folder to freeze into (--out DIR), or ask for a dry run")
    written = None if dry_run or out is None else freeze.write(frozen, out)
    return FreezeOutcome(matrix=frozen.matrix, screen=screen, rounds=ab, out=written)


def check_frozen(host: PluginHost, frozen_dir: Path, *, python: str | None = None) -> FrozenMatrix:
    """The frozen matrix once every precondition holds (SealBrokenError names each broken one)."""
    return preconditions.check(host, frozen_dir, python=python)


#: What a run of a frozen matrix still takes from the command line: where results go, how
#: often telemetry is sampled and how long a busy device is waited for (none of them is
#: part of what the cells measure).
MAY_GIVE = ("runs_root", "frozen", "config", "telemetry_interval", "measure.lock_timeout_s")


def flags_beside_a_manifest() -> tuple[str, ...]:
    """The command-line flags of ``MAY_GIVE``, in its order (a command's --help names those it has)."""
    return tuple(dict.fromkeys(option_flag(name) for name in MAY_GIVE))


def shown_compiler(matrix: Mapping[str, Any]) -> list[str]:
    """The compiler build and the inherited compiler variables a matrix binds, one line each."""
    from zl_core.foundation.compiler_build import build_id
    from zl_core.foundation.compiler_env import caliber_value

    bound = matrix.get("compiler") or {}
    shown = build_id({m: b["digest"] for m, b in bound.items()})
    lines = [f"compiler build {shown} (the cells' compiler_build)"]
    for module, build in bound.items():
        version = f" {build['version']}" if build.get("version") else ""
        commit = f", commit {build['commit']}" if build.get("commit") else ""
        lines.append(f"  {module}{version}: {build['path']}, {len(build['files'])} files{commit}")
    lines.append(f"compiler variables the cells inherit: {caliber_value(matrix.get('compiler_env') or {})}")
    return lines


def shown_check(check: CheckSpec) -> str:
    """A frozen task's accuracy tests as the pytest arguments its check cells get, quoted."""
    return shlex.join(check.pytest_args())


def frozen_options(kind: str, frozen_dir: Path, given):
    """``ScreenOptions`` (kind "screen") or ``AbOptions`` ("ab") of the frozen matrix under
    ``frozen_dir``; options given beside ``--manifest`` other than the runs root are
    refused by name (the matrix decides them)."""
    from zl_core.app.options import AbOptions, ScreenOptions, SwitchChoice, Where
    from zl_core.interface.opspec import OpSpec

    cls = ScreenOptions if kind == "screen" else AbOptions
    default = cls()
    flat_given, flat_default = flat_options(options_json(given)), flat_options(options_json(default))
    differ = sorted({option_flag(name) for name, value in flat_given.items()
                     if name not in MAY_GIVE and name.split(".")[0] not in MAY_GIVE
                     and value != flat_default.get(name)})
    if differ:
        raise UsageError(f"--manifest runs the frozen matrix as it was frozen; drop "
                         f"{', '.join(differ)} (the matrix decides them), or freeze a new manifest")
    matrix, _seal = freeze.read(frozen_dir)
    sources = matrix.sources
    default_name = str(sources[0]["name"]) if sources else ""
    names = frozenset(str(s["name"]) for s in sources)
    ops = tuple(str(OpSpec(op=(f"{t.source}:" if t.source and t.source != default_name else "") + t.op,
                           op_file=t.op_file, dtypes=t.dtypes))
                for t in matrix.tasks)
    op_names = [OpSpec.parse(spec, prefixes=names, default_source=default_name).op for spec in ops]
    where = Where(suite=matrix.suite,
                  source=f"{sources[0]['name']}={sources[0]['path']}" if sources else None,
                  more_sources=tuple(f"{s['name']}={s['path']}" for s in sources[1:]),
                  backend=matrix.backend, device=matrix.device)
    base = default.measure
    measure = attrs.evolve(base, python=matrix.python or base.python, lock_timeout_s=given.measure.lock_timeout_s,
                           timer=matrix.timer, timing=matrix.timing or base.timing, l2=matrix.l2 or base.l2,
                           replay_ms=matrix.replay_ms, level=matrix.level, timeout_s=matrix.timeout_s,
                           op_timeouts=tuple((name, t.timeout_s) for name, t in zip(op_names, matrix.tasks, strict=True)
                                             if t.timeout_s != matrix.timeout_s),
                           compile_only=matrix.compile_only, target=matrix.target)
    name, a_value, b_value = matrix.switch
    switch = SwitchChoice(switch=name, a_value=a_value, b_value=b_value)
    if kind == "screen":
        return ScreenOptions(ops=ops, where=where, measure=measure, switch=switch,
                             runs_root=given.runs_root, frozen=Path(frozen_dir).resolve())
    checks = tuple((name, check.file, check.select) for name, t in zip(op_names, matrix.tasks, strict=True)
                   if (check := t.check) is not None)
    return AbOptions(ops=ops, where=where, measure=measure, switch=switch, runs_root=given.runs_root,
                     frozen=Path(frozen_dir).resolve(), telemetry_interval=given.telemetry_interval,
                     checks=checks, control_env=matrix.control_env, rounds=matrix.rounds,
                     max_rounds=matrix.max_rounds, threshold_pct=matrix.threshold_pct,
                     retuned=matrix.retuned)




def finish_campaign(campaign: Path) -> Path | None:
    """The last steps of a campaign whose cells all ended (state ``finishing``): its
    classes (a frozen A/B), its receipts, its seal when it ran a frozen matrix (its files
    read-only), and last campaign.json marked complete. The receipt binds campaign.json
    as it is then written, and that one rename is the finish's commit: a finish cut
    before it leaves the campaign ``finishing``, and ``--resume`` writes it all again.
    Returns the campaign receipt (None: the campaign was not finishing)."""
    from zl_core.campaigns import state
    from zl_core.campaigns.judging import RULES
    from zl_core.decisions.status import latest_by_cell, read_status
    from zl_core.foundation import interrupts
    from zl_core.foundation.atomic import json_text, write_text_atomic
    from zl_core.foundation.stamps import utc_stamp
    from zl_core.seal import receipts
    from zl_core.store.layout import CHECK_DIR, CampaignLayout
    from zl_core.store.record import read_campaign

    layout = CampaignLayout(Path(campaign))
    meta = read_campaign(layout.root)
    if state.state_of(meta) != state.FINISHING:
        return None
    found = {(layout.root / row.cell) for row in latest_by_cell(read_status(layout.root)).values()
             if row.cell and (layout.root / row.cell).is_dir()}
    found |= {d for d in layout.root.glob(f"*/{CHECK_DIR}/*") if d.is_dir()}  # accuracy-test cells
    cells = sorted(found)
    frozen_dir = (meta.options or {}).get("frozen")
    frozen = None
    if frozen_dir:
        matrix, sealed = freeze.read(Path(str(frozen_dir)))
        frozen = {"dir": str(frozen_dir), "campaign": matrix.campaign,
                  "manifest_sha256": sealed.get("manifest_sha256"),
                  "matrix_sha256": sealed.get("matrix_sha256")}
    if frozen is not None and meta.is_rounds:
        write_classes(layout, matrix)
    complete = json_text(attrs.evolve(meta, state=state.COMPLETE, state_changed=utc_stamp()).to_json())
    path = receipts.write(layout, cells, rules=RULES if meta.is_rounds else None,
                          frozen=frozen, campaign_json=complete)
    if frozen is not None:
        receipts.seal(layout)
    write_text_atomic(layout.campaign_file, complete, mode=0o444 if frozen is not None else None)
    interrupts.finishing("")  # complete: an interruption now cuts nothing
    return path


def _kept_model(layout) -> dict:
    """The report the campaign kept when it finished (report.json), else built now."""
    import json

    from zl_core import report

    try:
        model = json.loads(layout.report_json.read_text(encoding="utf-8"))
        if isinstance(model, dict) and model.get("kind") == "rounds":
            return model
    except (OSError, ValueError):
        pass  # safe: the report is built again from the cells, which it only summarises
    return report.build(layout.root, allow_mismatch=True)


def _refuse_unfinished(layout) -> None:
    """A campaign whose finish was cut has receipts of its finish that may be half
    written: it is completed by a resume, not read as sealed."""
    from zl_core.campaigns import state
    from zl_core.store.record import read_campaign

    try:
        meta = read_campaign(layout.root)
    except UsageError:
        return  # not a readable campaign: its receipt, or the lack of one, is named instead
    if state.state_of(meta) != state.COMPLETE:
        raise UsageError(f"{layout.root} is {state.state_of(meta)}, not sealed yet; "
                         f"{state.finish_hint(layout.root, meta, 'zl ab')}")


def write_classes(layout, matrix: FrozenMatrix) -> Path:
    """classes.json of a frozen A/B campaign, under the frozen matrix's rule."""
    from zl_core.foundation.atomic import write_json_atomic
    from zl_core.seal import account, receipts

    classes = account.account(layout.root, _kept_model(layout), floor=matrix.launch_floor,
                              gain_pct=matrix.gain_pct, regression_pct=matrix.regression_pct)
    return write_json_atomic(layout.root / receipts.CLASSES_FILE, classes)


def reaccount_campaign(campaign: Path, out: Path, *, launch_floor: int | None = None,
                       gain_pct: float | None = None, regression_pct: float | None = None) -> dict:
    """Re-derive a sealed A/B campaign's classes under another rule (the values not given
    are the sealed rule's), from its sealed files alone; written under ``out``, never
    inside a campaign. Returns what was written (``classes.json``'s content)."""
    from zl_core.foundation.atomic import write_json_atomic
    from zl_core.foundation.errors import BadInputError
    from zl_core.seal import account, digests, receipts
    from zl_core.store.layout import CampaignLayout, enclosing_campaign

    layout = CampaignLayout(Path(campaign))
    _refuse_unfinished(layout)
    if not (layout.root / receipts.RECEIPT).is_file():
        raise UsageError(f"{layout.root} has no campaign receipt ({receipts.RECEIPT}); zl reaccount "
                         "reads sealed runs (zl ab --manifest)")
    changed = receipts.check(layout.root)
    if changed:
        raise BadInputError(f"{layout.root} changed since its receipt ({'; '.join(changed[:3])}"
                            f"{'; ...' if len(changed) > 3 else ''}); a re-accounting reads the "
                            "sealed files as they were sealed")
    sealed = account.read_classes(layout.root / receipts.CLASSES_FILE)
    if sealed is None:
        raise UsageError(f"{layout.root} has no readable {receipts.CLASSES_FILE}; only an A/B "
                         "campaign of a frozen matrix is accounted into classes")
    out = Path(out)
    inside = enclosing_campaign(out)
    if inside is not None:
        raise UsageError(f"--out {out} lies inside campaign {inside}; a re-accounting is written "
                         "outside every run (e.g. --out reaccounted/)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty folder; give a new one")
    rule = sealed.get("rule") or {}
    derived = account.reaccount(
        sealed, layout.root, _kept_model(layout),
        floor=int(rule.get("launch_floor", 4) if launch_floor is None else launch_floor),
        gain_pct=float(rule.get("gain_pct", 5.0) if gain_pct is None else gain_pct),
        regression_pct=float(rule.get("regression_pct", 3.0) if regression_pct is None else regression_pct))
    out.mkdir(parents=True, exist_ok=True)
    classes = write_json_atomic(out / receipts.CLASSES_FILE, derived)
    write_json_atomic(out / receipts.RECEIPT, {
        "schema": receipts.SCHEMA, "reaccounts": str(layout.root),
        "sealed_receipt_sha256": digests.file_sha256(layout.root / receipts.RECEIPT),
        "sealed_classes_sha256": digests.file_sha256(layout.root / receipts.CLASSES_FILE),
        "sealed_rule": rule, "rule": derived["rule"], "changes": derived["changes"],
        "classes_sha256": digests.file_sha256(classes), "written": derived["written"]})
    return derived
