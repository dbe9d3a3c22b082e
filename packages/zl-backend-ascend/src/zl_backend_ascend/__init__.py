"""zl backend for Huawei Ascend NPUs. The hooks live in :mod:`zl_backend_ascend.plugin`."""

__version__ = "0.1.0"
