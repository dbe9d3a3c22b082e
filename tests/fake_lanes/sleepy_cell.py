"""A cell that sleeps: it honours the ZL_* contract like fake_cell.py and records,
in the ledger file $ZL_FAKE_LEDGER, which device it saw, when it ran and its pid.

Behaviour by op name: "slow*" sleeps 4x longer; "stuck*" never ends its timing; "crash*" dies by SIGSEGV on its
first attempt only when $ZL_FAKE_CRASH_ONCE names a marker file, otherwise on
every attempt; "dtype*" rejects its dtype filter the way FlagGems words it; "diskfull*"
fails as Python does on a full disk while the file $ZL_FAKE_DISK_FULL exists.
Everything else sleeps $ZL_FAKE_SLEEP seconds (default 0.3) and measures two rows. The
sleep is its "timing loop": a cell that gets to its end records it as the interval in
which it held its device for timing (zl_core.interface.occupancy).
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

from zl_core.interface import caliber, contract, phases, timing_gate

CLOCK = phases.PhaseClock(device=phases.DEVICE_PHASES, gate=timing_gate.TimingGate.from_env())
cell = Path(os.environ["ZL_CELL_DIR"])
op = os.environ["ZL_OP"]
mode = os.environ["ZL_AUTOTUNE_MODE"]
device = os.environ.get("CUDA_VISIBLE_DEVICES", "")
ledger = os.environ.get("ZL_FAKE_LEDGER")


def note(event: str) -> None:
    if ledger:
        line = f"{event}\t{device}\t{op}\t{cell.name}\t{os.getpid()}\t{time.time():.6f}\n"
        fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(fd, line.encode())
        os.close(fd)


note("start")
print(f"sleepy cell op={op} side={cell.name} device={device} pid={os.getpid()} "
      f"l2={os.environ.get('ZL_L2')}", flush=True)
if op.startswith("crash"):
    once = os.environ.get("ZL_FAKE_CRASH_ONCE")
    if not once or not Path(once, op).exists():
        if once:
            Path(once, op).touch()
        os.kill(os.getpid(), signal.SIGSEGV)
full = os.environ.get("ZL_FAKE_DISK_FULL")
if op.startswith("diskfull") and full and Path(full).exists():
    print("Traceback (most recent call last):\n  File \"triton/runtime/cache.py\", line 131, in put\n"
          f"OSError: [Errno 28] No space left on device: '{cell}/.triton_cache/kernel.ttgir'", flush=True)
    sys.exit(1)
if op.startswith("dtype") and os.environ.get("ZL_DTYPES"):
    print(f"AssertionError: {os.environ['ZL_DTYPES']} can't be supported by this op")
    sys.exit(1)
seconds = float(os.environ.get("ZL_FAKE_SLEEP", "0.3")) * (4 if op.startswith("slow") else 1)
CLOCK.hold_device()  # as the real cell's first test: the gate, until the process exits
with CLOCK.phase(phases.OPERATOR):
    if op.startswith("stuck"):  # never ends its timing: its record says it holds the gate
        caliber.merge_identity(cell, {phases.CELL_KEY: phases.cell_record(
            {}, started_epoch=CLOCK.started_epoch, final=False, gate=CLOCK.gate_record())})
        note("stuck")
        time.sleep(600)
    time.sleep(seconds)
if op.startswith("failr2") and cell.parent.name == "r02" and cell.name == "A":
    print("failr2: side A of round 2 fails after its timing", flush=True)
    sys.exit(2)  # a failure, not a crash: no retry, the operator stops after this round

if mode == "record":
    (cell / "autotune_records").mkdir(parents=True, exist_ok=True)
    (cell / "autotune_records" / "meta.json").write_text(json.dumps({"backend": os.environ["ZL_BACKEND"]}))
body = "tt.dot mma_v2" if (op.endswith("changed") and cell.name == "B") else "tt.add"
# The control side ("C": the switch on, its phases off) compiles side A's code, but for
# "leak*" operators, whose switch changes code outside its phases.
label = ("B" if op.startswith("leak") else "A") if cell.name == "C" else cell.name
side_b = label == "B"
# "*conv" operators stand for a layout pass: (measured kernel's converts, input kernel's
# converts) per side; the input kernel is launched twice, the measured one 200 times.
CONVERTS = {"gconv": ((3, 0), (1, 0)), "cconv": ((3, 0), (1, 0)), "bconv": ((1, 0), (1, 0)),
            "wrongconv": ((3, 0), (1, 0)), "brokenconv": ((3, 0), (1, 0)), "leakconv": ((3, 0), (1, 0)),
            "rconv": ((1, 0), (2, 0)), "inputconv": ((2, 2), (2, 0)), "hiddenconv": ((2, 0), (1, 2))}
#: B's latency relative to A's (1.0: the same), per operator.
SPEED = {"gconv": 0.9, "cconv": 0.98, "rconv": 1.05, "inputconv": 0.98, "hiddenconv": 0.9,
         "wrongconv": 0.9, "brokenconv": 0.9, "leakconv": 0.9}
kernel = cell / "ttgir" / "64" / f"{op}_kernel"
kernel.mkdir(parents=True, exist_ok=True)
if op in CONVERTS:
    from zl_core.interface.ttgir_layout import IndexRow, write_index

    measured, made = CONVERTS[op][1 if side_b else 0]
    convert = "  %c = ttg.convert_layout %x\n"
    (kernel / "default.ttgir").write_text(f"module {{ // {label}\n{convert * measured}}}\n")
    inputs = cell / "ttgir" / "64" / "randn_kernel"
    inputs.mkdir(parents=True, exist_ok=True)
    (inputs / "default.ttgir").write_text(f"module {{ // {label}\n{convert * made}}}\n")
    write_index(cell / "ttgir", [
        IndexRow(shape="64", kernel=f"{op}_kernel", file=f"64/{op}_kernel/default.ttgir", launches=200),
        IndexRow(shape="64", kernel="randn_kernel", file="64/randn_kernel/default.ttgir", launches=2)])
else:
    (kernel / "default.ttgir").write_text(f"module {{ {body} }}\n")
round_no = int(cell.parent.name[1:]) if cell.parent.name.startswith("r") else 0
gems = 1.0 * (1 + 0.001 * (round_no % 3))  # a little round-to-round spread
if side_b:
    gems *= SPEED.get(op, 1.0)
rows = [{"op": op, "dtype": "float16", "size_detail": f"[torch.Size([{n}])]",
         "torch_latency_ms": 1.0, "latency_ms": gems, "speedup": 1.0 / gems, "status": "SUCCESS",
         "timer": "graph", "fallback": False, "error": None} for n in (64, 128)]
# With $ZL_FAKE_SLOW_FINISH its rows go where only the suite's own reader finds them
# (SleepyProvider.read_rows), as a suite whose benchmarks print their results keeps them.
rows_file = "rows.sleepy.json" if os.environ.get("ZL_FAKE_SLOW_FINISH") else "results.json"
(cell / rows_file).write_text(json.dumps({"schema": 1, "op": op, "rows": rows, "markers": {}}))
if os.environ.get(contract.GATE_RELEASE) == contract.GATE_AFTER_TESTS:
    CLOCK.release_device()  # as the real cell at its session's end: its tests are over
caliber.merge_identity(cell, {phases.CELL_KEY: phases.cell_record(
    {name: CLOCK.seconds.get(name, 0.0) for name in phases.CELL_PHASES},
    started_epoch=CLOCK.started_epoch, final=True, device_busy=CLOCK.busy_record(),
    gate=CLOCK.gate_record())})
time.sleep(float(os.environ.get("ZL_FAKE_TEARDOWN_S", "0")))  # a teardown after the last record
note("end")
