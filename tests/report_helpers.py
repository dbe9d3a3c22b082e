"""What the report tests share: a caliber identity and the zl CLI in-process."""

from __future__ import annotations

from zl_core import cli

# The caliber fields of one graph-timed H200 cell (zl_core.interface.caliber.CALIBER_FIELDS).
IDENTITY = {
    "backend": "cuda", "device": "0", "device_name": "NVIDIA H200", "timer": "graph",
    "bench_level": "core", "shape_mode": "upstream", "tuner_cache": "isolated",
    "direct_repeat": 1, "triton_version": "3.6.0", "torch_version": "2.11.0",
    "compile_only": False, "target": None,
}


def zl(argv) -> int:
    """``zl ARGV...`` in this process; returns its exit code."""
    return cli.main([str(a) for a in argv])
