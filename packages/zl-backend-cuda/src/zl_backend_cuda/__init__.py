"""zl backend for NVIDIA GPUs. The hooks live in :mod:`zl_backend_cuda.plugin`."""

__version__ = "0.1.0"
