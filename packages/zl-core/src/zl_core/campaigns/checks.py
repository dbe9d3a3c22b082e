"""What an A/B operator runs besides its rounds, on the same lane: each side's accuracy
tests once its rounds are done (``<op>/check/A|B``), and the control side's round-1 cell
(``<op>/r01/C``: side B's environment with every phase the switch gates off), whose TTGIR
must equal side A's.

A check cell ends non-zero when a test fails: that is the finding, not a harness failure,
so it is read from its JUnit report (``seal.correctness``), not from status.tsv, and it
never stops the operator or fails the campaign.
"""

from __future__ import annotations

import shlex

import attrs

from zl_core.cells.cell import CellOutcome, run_cell
from zl_core.decisions.ir_verdict import SideResult
from zl_core.foundation.errors import PreflightError
from zl_core.interface.contract import ACCURACY_REPORT, STACKS_FILE
from zl_core.interface.contract import CHECK_REFUSED as REFUSED
from zl_core.interface.provider import CellRequest

from .cell_run import run_side
from .executor import Lane, TaskRuntime

CONTROL = "C"


def run_checks(task, lane: Lane, runtime: TaskRuntime) -> None:
    """Run side A's and side B's accuracy tests of ``task``'s operator (kept if done)."""
    layout = lane.layout(task.layout)
    provider = runtime.host.get_provider(task.suite)
    op = task.op.op
    for side in ("A", "B"):
        out = layout.check_dir(op, side)
        if (out / ACCURACY_REPORT).is_file() or (out / REFUSED).is_file():
            runtime.sink.check_finished(op=op, side=side, text="finished before, kept")
            continue
        request = attrs.evolve(task.request(lane, side, 1), out_dir=out, check=task.check,
                               autotune_mode="uncontrolled", replay_from=None, sweep_devices=())
        runtime.sink.check_started(op=op, side=side, label=shlex.join(task.check.pytest_args()))
        try:
            outcome = run_cell(runtime.host, provider, request)
        except PreflightError as exc:
            out.mkdir(parents=True, exist_ok=True)
            (out / REFUSED).write_text(str(exc) + "\n", encoding="utf-8")
            runtime.sink.check_finished(op=op, side=side, text=str(exc))
            continue
        runtime.sink.check_finished(op=op, side=side, text=ended(outcome, request))


def ended(outcome: CellOutcome, request: CellRequest) -> str:
    """How a check cell ended, for its campaign line: a stall and a timeout each say so."""
    if outcome.stalled:
        how = (f" (stalled: no output or progress for {request.stall_timeout_s:g}s; stacks in "
               f"{outcome.cell_dir / STACKS_FILE})")
    elif outcome.timed_out:
        how = f" (timed out after {request.timeout_s:g}s)"
    else:
        how = ""
    return f"rc={outcome.rc}{how} {outcome.elapsed_s:.1f}s"


def control_request(task, lane: Lane) -> CellRequest:
    """The control side's round-1 cell: side B's, replaying side A's record, with the
    control variables added."""
    b = task.request(lane, "B", 1)
    layout = lane.layout(task.layout)
    return attrs.evolve(b, out_dir=layout.cell_dir(task.op.op, CONTROL, 1),
                        env={**b.env, **dict(task.control_env)}, side=CONTROL,
                        compile_cache=layout.compile_cache(task.op.op, CONTROL))


def run_control(task, lane: Lane, runtime: TaskRuntime) -> SideResult:
    return run_side(runtime, task.suite, control_request(task, lane), round_no=1,
                    switch_value="control")
