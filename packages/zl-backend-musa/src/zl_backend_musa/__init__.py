"""zl backend for Moore Threads GPUs. The hooks live in :mod:`zl_backend_musa.plugin`."""

__version__ = "0.1.0"
