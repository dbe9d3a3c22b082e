"""A cell that sleeps: it honours the ZL_* contract like fake_cell.py and records,
in the ledger file $ZL_FAKE_LEDGER, which device it saw, when it ran and its pid.

Behaviour by op name: "slow*" sleeps 4x longer; "crash*" dies by SIGSEGV on its
first attempt only when $ZL_FAKE_CRASH_ONCE names a marker file, otherwise on
every attempt; "dtype*" rejects its dtype filter the way FlagGems words it.
Everything else sleeps $ZL_FAKE_SLEEP seconds (default 0.3) and measures two rows.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

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
print(f"sleepy cell op={op} side={cell.name} device={device} pid={os.getpid()}", flush=True)
if op.startswith("crash"):
    once = os.environ.get("ZL_FAKE_CRASH_ONCE")
    if not once or not Path(once, op).exists():
        if once:
            Path(once, op).touch()
        os.kill(os.getpid(), signal.SIGSEGV)
if op.startswith("dtype") and os.environ.get("ZL_DTYPES"):
    print(f"AssertionError: {os.environ['ZL_DTYPES']} can't be supported by this op")
    sys.exit(1)
seconds = float(os.environ.get("ZL_FAKE_SLEEP", "0.3")) * (4 if op.startswith("slow") else 1)
time.sleep(seconds)

if mode == "record":
    (cell / "autotune_records").mkdir(parents=True, exist_ok=True)
    (cell / "autotune_records" / "meta.json").write_text(json.dumps({"backend": os.environ["ZL_BACKEND"]}))
body = "tt.dot mma_v2" if (op.endswith("changed") and cell.name == "B") else "tt.add"
kernel = cell / "ttgir" / "64" / f"{op}_kernel"
kernel.mkdir(parents=True, exist_ok=True)
(kernel / "default.ttgir").write_text(f"module {{ {body} }}\n")
rows = [{"op": op, "dtype": "float16", "size_detail": f"[torch.Size([{n}])]",
         "torch_latency_ms": 1.0, "gems_latency_ms": 1.0, "speedup": 1.0, "status": "SUCCESS",
         "timer": "graph", "fallback": False, "error": None} for n in (64, 128)]
(cell / "results.json").write_text(json.dumps({"schema": 1, "op": op, "rows": rows, "markers": {}}))
note("end")
