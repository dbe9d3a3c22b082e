"""zl backend for AMD GPUs. The hooks live in :mod:`zl_backend_rocm.plugin`."""

__version__ = "0.1.0"
