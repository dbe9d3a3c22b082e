"""A stand-in cell process for orchestration tests: it honours the ZL_* contract
the way the real pytest plugins do, without a device.

Behaviour by op name: "gemm" changes its TTGIR and latency with FAKE_SWITCH;
"pointwise" keeps identical TTGIR;
"inputbuild" changes only a once-launched input-construction kernel; "aten" measures rows but compiles nothing;
"norows" prints and measures nothing; "hang" sleeps (with a child) forever, silent;
"quietwork" prints nothing for 3 s but beats its progress file, as compiling cells do;
as a sweep shard (ZL_SWEEP_SHARD), "shardfail"'s second shard fails.
A cell that gets to its end writes its phase record as the real plugins do, with the
interval in which it "timed" on its device ($FAKE_TIME_S seconds, default 0.05, in the
operator-timing phase).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from zl_core.cells import liveness
from zl_core.interface import caliber, phases, timing_gate

CLOCK = phases.PhaseClock(device=phases.DEVICE_PHASES, gate=timing_gate.TimingGate.from_env())
CLOCK.enter(phases.START)
liveness.arm()
cell = Path(os.environ["ZL_CELL_DIR"])
op = os.environ["ZL_OP"]
switch = os.environ.get("FAKE_SWITCH", "0")
mode = os.environ["ZL_AUTOTUNE_MODE"]
print(f"fake cell op={op} switch={switch} mode={mode} triton_cache={os.environ['TRITON_CACHE_DIR']} "
      f"preloaded={'decimal' in sys.modules}")  # a warm start's module (tests/conftest.py)
# What an earlier cell compiled into this cell's Triton cache, then this cell's own
# "compile" (named by the switch value it was built under).
compile_cache = Path(os.environ["TRITON_CACHE_DIR"])
compile_cache.mkdir(parents=True, exist_ok=True)
print(f"fake cell cache_seen={','.join(sorted(p.name for p in compile_cache.iterdir())) or '-'}")
(compile_cache / f"kernel-switch{switch}").write_text("compiled\n")

if op == "hang":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    time.sleep(600)
if op == "quietwork":
    liveness.BEAT_EVERY_S = 0.0
    for _ in range(15):
        time.sleep(0.2)
        liveness.beat()

shard = os.environ.get("ZL_SWEEP_SHARD", "")
if shard:
    index, count = (int(x) for x in shard.split("/"))
    if op == "shardfail" and index == 1:
        print("fake shard failing")
        sys.exit(3)
    caliber.merge_identity(cell, {"sweep_shard": {"index": index, "count": count}})

records = cell / "autotune_records"
if mode == "record":
    records.mkdir(parents=True, exist_ok=True)
    (records / "meta.json").write_text(json.dumps({"backend": os.environ["ZL_BACKEND"]}))
    (records / "kernel.json").write_text(json.dumps({"(64,)": {"BLOCK": 64}}))
elif mode == "replay":
    replay = Path(os.environ["ZL_REPLAY_DIR"])
    if not (replay / "kernel.json").is_file():
        print("AUTOTUNE_REPLAY_FALLBACK kernel=kernel key=(64,)")

CLOCK.leave(phases.START)
if op == "norows":
    sys.exit(1)

if op in ("gemm", "pointwise", "shardfail", "shardhole"):
    body = "tt.dot mma_v3" if (op == "gemm" and switch == "0") else "tt.dot mma_v2" if op == "gemm" else "tt.add"
    locations = ""
    if os.environ.get("FAKE_IR_DRIFT_ROUND") and cell.parent.name == os.environ["FAKE_IR_DRIFT_ROUND"]:
        if os.environ.get("FAKE_IR_DRIFT_KIND") == "locations":  # the same code, another source path
            # as Triton writes locations: a reference on the op, its definition at the end
            body += " loc(#loc1)"
            locations = f'#loc1 = loc("{cell}/code_cache/kernel.py":3:1)\n'
        else:
            body += " tt.drifted"  # this round compiled other code than the rounds before
    d = cell / "ttgir" / "64" / f"{op}_kernel"
    d.mkdir(parents=True, exist_ok=True)
    (d / "default.ttgir").write_text(f"module {{ {body} ttg.convert_layout }}\n{locations}")
    (cell / "ttgir" / "index.tsv").write_text(f"shape\tkernel\tfile\tlaunches\n64\t{op}_kernel\t64/{op}_kernel/default.ttgir\t200\n")
if op == "inputbuild":
    # The timed kernel is the same on both sides; the kernel that builds the inputs,
    # launched once, loses its layout conversion under the switch.
    index = ["shape\tkernel\tfile\tlaunches"]
    for kernel, launches, text in (
            ("inputbuild_kernel", 200, ["tt.addf", "ttg.convert_layout"]),
            ("randn_kernel", 1, ["tt.rand"] if switch == "1" else ["tt.rand", "ttg.convert_layout"])):
        d = cell / "ttgir" / "64" / kernel
        d.mkdir(parents=True, exist_ok=True)
        body = "".join(f"  %{i} = {name} %arg0\n" for i, name in enumerate(text))
        (d / "default.ttgir").write_text(f"module {{\n{body}}}\n")
        index.append(f"64\t{kernel}\t64/{kernel}/default.ttgir\t{launches}")
    (cell / "ttgir" / "index.tsv").write_text("\n".join(index) + "\n")

base = 1.0
gems = base * (1.05 if (op == "gemm" and switch == "1") else 1.0)
rows = [{"op": op, "dtype": "float16", "size_detail": f"[torch.Size([{n}])]",
         "torch_latency_ms": base, "latency_ms": gems * n / 64, "speedup": base / gems,
         "status": "SUCCESS", "timer": "graph", "fallback": False, "error": None}
        for n in (64, 128)]
(cell / "results.json").write_text(json.dumps({"schema": 1, "op": op, "rows": rows, "markers": {}}))
print(f"Operator: {op}  Performance Test (dtype=torch.float16, mode=kernel,level=core)")
with CLOCK.phase(phases.OPERATOR):  # its "timing loop": the device held for timing
    time.sleep(float(os.environ.get("FAKE_TIME_S", "0.05")))

# The phases the real plugins measure; a fake cell spends its time in the start and timing.
caliber.merge_identity(cell, {phases.CELL_KEY: phases.cell_record(
    {name: CLOCK.seconds.get(name, 0.0) for name in phases.CELL_PHASES},
    started_epoch=CLOCK.started_epoch, final=True, device_busy=CLOCK.busy_record(),
    gate=CLOCK.gate_record())})
