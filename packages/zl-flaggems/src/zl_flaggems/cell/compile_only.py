"""Compile-only cell: the built-in suite's kernels compiled for a target, no device.

    python -m zl_flaggems.cell.compile_only --op mm [--target <kind>:<arch>] [--dtypes float16]

Runs in a fresh process with the side's environment already applied by the core
(so a switch such as ``DISABLE_MMA_V3=1`` reaches the compiler), compiles every
``COMPILE_SPECS`` entry of the operator's kernel module with
``triton.compile(ASTSource(...), target=GPUTarget(...))`` and writes, under
``$ZL_CELL_DIR`` (or ``--cell-dir``):

* ``ttgir/<label>/<kernel>/<variant>.ttgir`` and ``ttgir/index.tsv`` in the
  :mod:`zl_core.interface.ttgir_layout` layout. ``launches`` is 0 in every index row:
  nothing ran, and a reader must not mistake a compiled variant for a launch;
  ``compile_only: true`` in the identity says why.
* ``results.json`` with no rows, ``compile_only: true`` and the time of each
  compile;
* the compile-only fields merged into ``run_identity.json``, with the cell's phases
  (:mod:`zl_core.interface.phases`): imports, selecting the specs (collection), compiling, the
  dump and writing the results (teardown); nothing is autotuned or timed, so those
  phases are 0.

Exit codes: 0 ok; 1 a kernel failed to compile (one line per failure naming the
kernel and the error's last line); 2 bad arguments; 3 triton is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from zl_core.cells import liveness
from zl_core.foundation.atomic import write_json_atomic
from zl_core.interface import contract, phases

from zl_flaggems.common.compile_targets import (
    EXIT_COMPILE,
    EXIT_MISSING,
    EXIT_USAGE,
    CompileOnlyError,
    default_target,
    parse_target,
)

# Started at import: the process's start before it is the orchestrator's to add.
CLOCK = phases.PhaseClock()
CLOCK.enter(phases.START)
liveness.arm()  # a stalled compile-only cell gives its stacks too

def _last_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[-1]}" if lines else type(exc).__name__


def select_specs(op: str, dtypes: list[str]):
    from zl_flaggems.builtin import kernels

    try:
        module = kernels.load(op)
    except KeyError as exc:
        raise CompileOnlyError(str(exc.args[0]), EXIT_USAGE) from None
    specs = list(module.COMPILE_SPECS)
    if dtypes:
        known = sorted({s.dtype for s in specs})
        unknown = [d for d in dtypes if d not in known]
        if unknown:
            raise CompileOnlyError(f"operator {op} has no {', '.join(unknown)} kernels; "
                                   f"its dtypes: {', '.join(known)}", EXIT_USAGE)
        specs = [s for s in specs if s.dtype in dtypes]
    return specs


def compile_specs(specs, target_triple):
    """Compile each spec; returns (compiled, failures), compiled = [(spec, ttgir, name, s)]."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget(*target_triple)
    compiled, failures = [], []
    for spec in specs:
        source = ASTSource(fn=spec.kernel, signature=dict(spec.signature),
                           constexprs=dict(spec.constexprs), attrs=spec.attrs())
        start = time.perf_counter()
        try:
            kernel = triton.compile(source, target=target, options=dict(spec.options))
            ttgir = kernel.asm["ttgir"]
        except Exception as exc:  # noqa: BLE001 - report every failing variant, then exit 1
            failures.append(f"compile-only: {spec.name} [{spec.label}] failed for "
                            f"{target_triple[0]}:{target_triple[1]}: {_last_line(exc)}")
            continue
        seconds = time.perf_counter() - start
        liveness.beat()
        name = getattr(kernel.metadata, "name", None) or spec.name
        compiled.append((spec, ttgir, name, seconds))
    return compiled, failures


def write_dump(cell_dir: Path, compiled) -> list[dict]:
    """Write the TTGIR layout + index; returns one record per compiled variant."""
    from zl_core.interface.ttgir_layout import (
        TTGIR_DIR,
        IndexRow,
        safe_component,
        variant_names,
        write_index,
    )

    root = cell_dir / TTGIR_DIR
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for item in compiled:
        groups[(item[0].label, item[2])].append(item)
    rows, records = [], []
    for (label, kernel), items in sorted(groups.items()):
        names = variant_names([spec.variant_key() for spec, *_ in items])
        folder = root / safe_component(label) / safe_component(kernel)
        folder.mkdir(parents=True, exist_ok=True)
        for (spec, ttgir, _, seconds), variant in zip(items, names, strict=True):
            path = folder / f"{variant}.ttgir"
            path.write_text(ttgir, encoding="utf-8")
            rel = path.relative_to(root).as_posix()
            rows.append(IndexRow(shape=safe_component(label), kernel=safe_component(kernel),
                                 file=rel, launches=0))
            records.append({"label": label, "kernel": kernel, "variant": variant, "file": rel,
                            "dtype": spec.dtype, "constexprs": spec.constexprs,
                            "options": spec.options, "seconds": round(seconds, 3)})
    write_index(root, rows)
    return records


def run(op: str, target: str, cell_dir: Path, dtypes: list[str]) -> int:
    triple = parse_target(target)
    target = f"{triple[0]}:{triple[1]}"
    try:
        import triton
    except ImportError as exc:
        raise CompileOnlyError(f"compile-only needs triton in {sys.executable}: "
                               f"{_last_line(exc)}; pip install triton", EXIT_MISSING) from None
    global CLOCK
    if CLOCK.is_open(phases.START):
        CLOCK.leave(phases.START)
    else:  # a second run in one process (tests): its own clock, from here
        CLOCK = phases.PhaseClock()
    with CLOCK.phase(phases.COLLECTION):
        specs = select_specs(op, dtypes)
    cell_dir.mkdir(parents=True, exist_ok=True)
    # Without a cell cache (a manual run), compile into a throwaway cache so a warm
    # ~/.triton cache can never stand in for this side's switch.
    saved = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TRITON_ALWAYS_COMPILE")}
    own_cache = None
    if not saved["TRITON_CACHE_DIR"]:
        own_cache = tempfile.mkdtemp(prefix="zl-compile-only-")
        os.environ["TRITON_CACHE_DIR"] = own_cache
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    started = time.perf_counter()
    try:
        with CLOCK.phase(phases.COMPILATION):
            compiled, failures = compile_specs(specs, triple)
    finally:
        if own_cache:
            shutil.rmtree(own_cache, ignore_errors=True)
        for key, value in saved.items():  # leave an in-process caller's environment as it was
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    total = time.perf_counter() - started
    with CLOCK.phase(phases.IR_DUMP):
        records = write_dump(cell_dir, compiled)
    CLOCK.enter(phases.TEARDOWN)
    for rec in records:
        print(f"compiled {rec['kernel']} [{rec['label']}/{rec['variant']}] for {target} "
              f"in {rec['seconds']:.2f}s")
    for line in failures:
        print(line, file=sys.stderr)

    from zl_core.interface.caliber import fill_identity

    # The core wrote these for a zl cell; only the compiler's version is the cell's own.
    fill_identity(cell_dir, {
        "timer": "none", "compile_only": True, "target": target,
        "triton_version": getattr(triton, "__version__", None),
        "device_name": f"none (compile-only {target})", "torch_version": None,
    })
    results = {"schema": 1, "op": op, "rows": [], "compile_only": True, "target": target,
               "markers": {m: 0 for m in contract.MARKERS}, "compiles": records,
               "failed_compiles": failures, "compile_seconds": round(total, 3)}
    write_json_atomic(cell_dir / "results.json", results)
    _write_phases(cell_dir)
    print(f"compile-only {op} for {target}: {len(records)} variant(s) in {total:.1f}s"
          f"{f', {len(failures)} failed' if failures else ''}")
    return EXIT_COMPILE if failures else 0


def _write_phases(cell_dir: Path) -> None:
    """The cell's phase record, last: what follows it is the process's exit."""
    from zl_core.interface.caliber import merge_identity

    CLOCK.leave(phases.TEARDOWN)
    seconds = {name: CLOCK.seconds.get(name, 0.0) for name in phases.CELL_PHASES}
    merge_identity(cell_dir, {phases.CELL_KEY: phases.cell_record(
        seconds, started_epoch=CLOCK.started_epoch, final=True,
        device_busy=CLOCK.busy_record())})  # never on a device: known, and empty


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m zl_flaggems.cell.compile_only",
                                description="Compile a built-in operator's kernels for a target "
                                "without a device and dump their TTGIR.")
    p.add_argument("--op", required=True, help="built-in operator, e.g. mm")
    p.add_argument("--target", default=None,
                   help="<kind>:<arch>, as the installed backends write it (default: $ZL_TARGET, "
                   "else the installed backends' default)")
    p.add_argument("--dtypes", default=None,
                   help="comma list of dtypes to compile (default: $ZL_DTYPES, else all)")
    p.add_argument("--cell-dir", type=Path, default=None, help="output folder (default: $ZL_CELL_DIR)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    target = args.target or os.environ.get(contract.TARGET)
    raw_dtypes = args.dtypes if args.dtypes is not None else os.environ.get(contract.DTYPES, "")
    dtypes = [d.strip() for d in raw_dtypes.split(",") if d.strip()]
    cell = args.cell_dir or (Path(os.environ[contract.CELL_DIR]) if os.environ.get(contract.CELL_DIR) else None)
    try:
        if cell is None:
            raise CompileOnlyError("no output folder: set ZL_CELL_DIR or pass --cell-dir", EXIT_USAGE)
        return run(args.op, target or default_target(), Path(cell).resolve(), dtypes)
    except CompileOnlyError as exc:
        print(f"compile-only: {exc}", file=sys.stderr)
        return exc.code


if __name__ == "__main__":
    sys.exit(main())
