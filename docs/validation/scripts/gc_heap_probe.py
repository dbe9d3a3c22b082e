"""What one full garbage collection costs in a FlagGems cell's heap, and after gc.freeze().

A device-free stand-in for the cell's process: torch (a CPU build), Triton, and flag_gems
imported from a checkout with torch.cuda's and Triton's device queries answered by fixed
H100 values (a CPU host has no driver; the values only let the import finish, nothing
runs). Prints the heap's tracked objects and the seconds of gc.collect() before and after
gc.freeze(), the median of --repeat collections each.

    python docs/validation/scripts/gc_heap_probe.py FLAGGEMS_CHECKOUT [--repeat 5]

Needs torch (pip install torch==2.13.0 here: a CPU build), triton and flag_gems' own
requirements (sqlalchemy) in the interpreter that runs it.
"""

import argparse
import gc
import os
import statistics
import sys
import time
import types

parser = argparse.ArgumentParser()
parser.add_argument("checkout")
parser.add_argument("--repeat", type=int, default=5)
args = parser.parse_args()
sys.path.insert(0, os.path.join(args.checkout, "src"))

import torch  # noqa: E402
import triton.runtime  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

PROPS = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", major=9, minor=0, multi_processor_count=132,
                              total_memory=80 * 2**30, L2_cache_size=50 * 2**20,
                              max_shared_memory_per_block_optin=227 * 1024, warp_size=32,
                              regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048,
                              gcnArchName="")
for name, value in {"is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
                    "get_device_capability": lambda *a, **k: (9, 0), "set_device": lambda *a: None,
                    "get_device_properties": lambda *a, **k: PROPS,
                    "get_device_name": lambda *a, **k: PROPS.name}.items():
    setattr(torch.cuda, name, value)


class _Utils:
    def get_device_properties(self, device):
        return {"max_shared_mem": 232448, "multiprocessor_count": 132, "max_num_regs": 65536, "warpSize": 32,
                "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120,
                "max_threads_per_sm": 2048}


class _Driver:  # what flag_gems asks Triton's active driver at import
    utils = _Utils()
    backend = "cuda"

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_interface(self):
        return torch.cuda

    def get_active_torch_device(self):
        return torch.device("cuda", 0)

    def get_benchmarker(self):
        from triton.testing import do_bench
        return do_bench

    def get_empty_cache_for_benchmark(self):
        return None

    def is_active(self):
        return True


triton.runtime.driver.set_active(_Driver())
os.environ.setdefault("GEMS_VENDOR", "nvidia")
started = time.perf_counter()
import flag_gems  # noqa: E402,F401

print(f"Python {sys.version.split()[0]}, torch {torch.__version__}, Triton {triton.__version__}; "
      f"flag_gems imported in {time.perf_counter() - started:.2f} s")


def collections() -> float:
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


print(f"tracked objects {len(gc.get_objects())}: gc.collect() {collections():.3f} s")
gc.freeze()
print(f"after gc.freeze() ({gc.get_freeze_count()} frozen): gc.collect() {collections():.4f} s")
