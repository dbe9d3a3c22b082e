"""The cell contract: what a cell process is handed and what it prints back.

The core (:mod:`zl_core.cells.cell`) starts every cell and writes its environment; the
provider adds its own variables through its :class:`~zl_core.interface.provider.CellCommand`;
the pytest plugins inside the cell read them. Every ``ZL_*`` variable and every
marker name is spelled here once, and each variable has exactly one writer:

========================  ==========  ==============================================
variable                  writer      meaning
========================  ==========  ==============================================
``ZL_CELL_DIR``           core        the cell directory (plugins write nothing without it)
``ZL_BACKEND``            core        the backend's canonical name
``ZL_OP``                 core        the operator
``ZL_DTYPES``             core        comma list of dtypes ("" = the benchmark's own)
``ZL_AUTOTUNE_MODE``      core        record | replay | uncontrolled | none
``ZL_REPLAY_DIR``         core        the ``autotune_records/`` to replay (replay only)
``ZL_TIMER``              core        the requested timer (auto | graph | direct | none)
``ZL_DIRECT_REPEAT``      core        calls per direct-timed measurement (median)
``ZL_REPLAY_MS``          core        device milliseconds of one graph replay
``ZL_L2``                 core        the L2 cache graph-timed calls find (warm | flush)
``ZL_COMPILE_ONLY``       core        "1" for a compile-only cell
``ZL_TARGET``             core        the compile-only target (compile-only only)
``ZL_TIMING_GATE``        core        the device's timing gate file (pipelined cells only)
``ZL_GATE_RELEASE``       core        when a pipelined cell gives the gate back (exit | tests)
``ZL_GATE_TURN``          core        a file a started-early cell waits on before the gate
``ZL_SEED``               user        random seed; core passes it on, "0" when unset
``ZL_PROVIDER``           provider    the provider's name
``ZL_SHAPE_FILE``         provider    the shape YAML to inject ("" = the benchmark's own)
``ZL_SHAPE_MODE``         provider    the identity's ``shape_mode``
``ZL_SOURCE_PACKAGE``     provider    the package the cell's source holds (flaggems_vllm...)
``ZL_TTGIR_LAUNCH_HOOK``  user        "0" turns the TTGIR launch hook off
========================  ==========  ==============================================

A marker is one line of the cell's output that starts with its name, then
``key=value`` fields. Core counts them in ``run.log``; the plugins count the
ones they print into ``results.json``.
"""

from __future__ import annotations

import signal

# -- environment written by the core ----------------------------------------------

CELL_DIR = "ZL_CELL_DIR"
BACKEND = "ZL_BACKEND"
OP = "ZL_OP"
DTYPES = "ZL_DTYPES"
AUTOTUNE_MODE = "ZL_AUTOTUNE_MODE"
REPLAY_DIR = "ZL_REPLAY_DIR"
TIMER = "ZL_TIMER"
DIRECT_REPEAT = "ZL_DIRECT_REPEAT"
REPLAY_MS = "ZL_REPLAY_MS"
#: One graph replay's device time when nothing is given. From the spreads measured on
#: the H200, it brings a GEMM's device seconds per decided verdict to about 0.6x, at
#: 1.26x the cell cost of a memory-bound kernel, which no budget helps
#: (docs/validation/noise-floor.md).
DEFAULT_REPLAY_MS = 30.0
#: A screen's: its verdict is the TTGIR's, its timing one pair's first look, so it keeps
#: the cost of the timer before the budget existed (30 ms adds about 12% to the cell of
#: a five-shape operator, docs/validation/noise-floor.md).
SCREEN_REPLAY_MS = 10.0
#: What a cell times: "full" the reference (torch) and the operator, as the suite runs
#: by itself; "operator" the operator alone, what every verdict reads.
TIMINGS = ("full", "operator")
#: A campaign's timing plan beside those: "once" times the reference in round 1's cells
#: only (the reference does not depend on the switch, so later rounds would pay for the
#: same figure again); every later cell times the operator alone. Its cells' identities
#: say "once", so they compare with each other and with no cell of another plan.
REFERENCE_ONCE = "once"
TIMING_PLANS = (*TIMINGS, REFERENCE_ONCE)


def cell_timing(plan: str, round_no: int) -> str:
    """What a cell of round ``round_no`` times (one of :data:`TIMINGS`) under ``plan``."""
    if plan == REFERENCE_ONCE:
        return "full" if round_no == 1 else "operator"
    return plan
#: A screen's verdict is its TTGIR and its delta the operator's: no reference timing.
SCREEN_TIMING = "operator"
#: How a cell's interpreter starts: anew, or forked from one that imported the
#: provider's modules already (zl_core.cells.warmstart).
STARTS = ("cold", "warm")
#: How screens and A/B rounds start their cells by default: warm gave the same verdicts,
#: TTGIR and A/A side noise as cold on the H200 (docs/validation/2026-12-04-h200-throughput.md).
CAMPAIGN_START = "warm"
#: The L2 cache each graph-timed call finds: "warm", what the calls before it left (as
#: Triton's do_bench_cudagraph), or "flush", cleared by a write before it, subtracted
#: (as Triton's do_bench clears it). The identity's ``l2``, a caliber field.
L2 = "ZL_L2"
L2_MODES = ("warm", "flush")
#: What zl's commands ask for when none is given (--l2). On an H100 a warm cache timed
#: relu on L2-sized inputs 1.3-1.6x faster than flushed, and put DISABLE_MMA_V3's effect
#: on a 1024^3 fp16 mm at -40% where flushed it read -19%; flushing cost noise on the
#: memory-bound shapes, not on the GEMM's (docs/validation/2026-12-07-l2-flush.md).
DEFAULT_L2 = "flush"
#: What a cell does without ZL_L2, and what a campaign recorded before the setting did.
L2_UNSET = "warm"
COMPILE_ONLY = "ZL_COMPILE_ONLY"
TARGET = "ZL_TARGET"
#: Threads that compile an autotune sweep's candidates before they are timed (1: none).
COMPILE_WORKERS = "ZL_COMPILE_WORKERS"
#: ``index/count``: this cell is one shard of a sharded sweep (zl_core.cells.sweep_shards) and
#: sweeps only its slice of every benchmark's shapes.
SWEEP_SHARD = "ZL_SWEEP_SHARD"

#: The file a pipelined cell flocks before it times (zl_core.interface.timing_gate).
TIMING_GATE = "ZL_TIMING_GATE"
#: When a pipelined cell gives its device's gate back: when its process exits (its
#: teardown and the end of its device context alone on the device), or once its last
#: test ended and its device is idle (teardown beside the next cell's timing).
GATE_RELEASE = "ZL_GATE_RELEASE"
GATE_AT_EXIT, GATE_AFTER_TESTS = "exit", "tests"
GATE_RELEASES = (GATE_AT_EXIT, GATE_AFTER_TESTS)
#: A pipelined cell started while its operator's previous cell still works (its setup
#: beside that one's timing) waits, before it takes the gate, until this file says
#: TURN_GO (the previous cell ended and the operator goes on) or TURN_STOP (the operator
#: stopped: the cell exits TURN_STOPPED_RC, having done nothing on its device; no
#: status row ever shows it, the lane removes the cell's folder).
GATE_TURN = "ZL_GATE_TURN"
TURN_GO, TURN_STOP = "go", "stop"
TURN_STOPPED_RC = 79

CORE_WRITES = (CELL_DIR, BACKEND, OP, DTYPES, AUTOTUNE_MODE, REPLAY_DIR, TIMER, DIRECT_REPEAT,
               REPLAY_MS, L2, COMPILE_ONLY, TARGET, COMPILE_WORKERS, SWEEP_SHARD, TIMING_GATE,
               GATE_RELEASE, GATE_TURN)

# -- environment written by the provider (through its cell command) -------------------

PROVIDER = "ZL_PROVIDER"
SHAPE_FILE = "ZL_SHAPE_FILE"
SHAPE_MODE = "ZL_SHAPE_MODE"

#: The package the cell's source holds (FlagGems: flag_gems or flaggems_vllm), so the
#: plugins look at the package the benchmark imports.
SOURCE_PACKAGE = "ZL_SOURCE_PACKAGE"
PROVIDER_WRITES = (PROVIDER, SHAPE_FILE, SHAPE_MODE, SOURCE_PACKAGE)

# -- settings a user may give a cell (zl passes them on, never invents them) -------------

SEED = "ZL_SEED"
DEFAULT_SEED = "0"
TTGIR_LAUNCH_HOOK = "ZL_TTGIR_LAUNCH_HOOK"

# -- markers ---------------------------------------------------------------------------

#: A replayed autotune key had no recorded config and was tuned afresh.
AUTOTUNE_REPLAY_FALLBACK = "AUTOTUNE_REPLAY_FALLBACK"
#: A row meant to be graph-timed fell back to direct timing.
BENCHMARK_DIRECT_NO_CUDAGRAPH = "BENCHMARK_DIRECT_NO_CUDAGRAPH"
#: A graph-capture attempt killed the device context; the cell stops timing.
BENCHMARK_CAPTURE_POISONED = "BENCHMARK_CAPTURE_POISONED"
#: Another vendor's FlagGems backend module was imported into the cell.
FOREIGN_VENDOR_MODULE = "FOREIGN_VENDOR_MODULE"
#: The parallel compile of an autotune sweep was given up; the sweep compiled serially.
PARALLEL_COMPILE_FALLBACK = "PARALLEL_COMPILE_FALLBACK"

#: A sharded sweep was given up; the cell swept serially (printed by the campaign, not a cell).
SWEEP_SHARD_FALLBACK = "SWEEP_SHARD_FALLBACK"

MARKERS = (AUTOTUNE_REPLAY_FALLBACK, BENCHMARK_DIRECT_NO_CUDAGRAPH, BENCHMARK_CAPTURE_POISONED,
           FOREIGN_VENDOR_MODULE, PARALLEL_COMPILE_FALLBACK)

#: A recording cell's autotune picks, the folder a replaying cell's ``ZL_REPLAY_DIR`` names.
AUTOTUNE_RECORDS_DIR = "autotune_records"

# -- scratch folders of a cell (created by the cell, removed by the core afterwards) ------

TRITON_CACHE = ".triton_cache"
#: Where an A/B campaign keeps each side's Triton cache, shared by that side's cells of
#: one operator across rounds (``<campaign>/.compile_cache/<op>/<side>``), removed when the
#: operator's rounds and checks end.
COMPILE_CACHES = ".compile_cache"
#: Where a provider points its tuner's cache when the request isolates it.
TUNER_CACHE = ".tuner_cache"

# -- liveness: how a cell shows progress and gives its stacks (zl_core.cells.liveness) ----------

#: Touched by the cell whenever it makes progress that its output would not show.
PROGRESS_FILE = ".zl_progress"
#: Present while a pipelined cell waits for its device's timing gate (zl_core.interface.timing_gate):
#: the orchestrator counts that wait against neither the cell's timeout nor its stall window.
GATE_WAIT_FILE = ".zl_gate_wait"
#: Written by a pipelined cell once it holds its device's gate: its operator's next cell
#: may start setting up (zl_core.campaigns.prefetch).
GATE_TAKEN_FILE = ".zl_gate_taken"
#: Where a cell writes the Python stacks of its threads when it receives STACKS_SIGNAL.
STACKS_FILE = "stacks.txt"
STACKS_SIGNAL = signal.SIGUSR1
#: The stall window when none is given (``--stall-timeout``): over 20 times the longest
#: silence of any finished FlagGems cell measured on the H200 (13.7 s, a cold start's
#: imports), so a hung benchmark costs minutes (docs/validation/2026-12-04-h200-throughput.md).
DEFAULT_STALL_TIMEOUT_S = 300.0
#: A cell's timeout when none is given (``--timeout``): four times the longest cell
#: measured (a GEMM's side A with its autotune sweep, 280 s); the stall window ends a
#: hung cell long before.
DEFAULT_TIMEOUT_S = 1200.0
#: The compile pool's threads when none are given (``--compile-workers``): the cores of
#: the host that runs the cell, at most this many. On the H200's 16-core host a GEMM's
#: side A took 245 s on one thread, 80 s on 8 and 86 s on 16 (its 1,944 candidate
#: compiles; docs/validation/2026-12-04-h200-compile-pool.md), so more buys nothing.
COMPILE_WORKERS_CAP = 8
#: How long a cell waits for a device another zl process holds (``--lock-timeout``; 0:
#: for ever) before its campaign ends with exit 7, naming the holder.
DEFAULT_LOCK_TIMEOUT_S = 1800.0


# -- files a cell writes for the core ------------------------------------------------

#: The JUnit XML report a check cell (``CellRequest.check``) writes in its folder.
ACCURACY_REPORT = "accuracy.xml"
#: Where a check cell that could not start says why (in place of its report).
CHECK_REFUSED = "refused.txt"
