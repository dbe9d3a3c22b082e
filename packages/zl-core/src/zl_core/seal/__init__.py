"""Sealed campaigns (docs/sealed-campaigns.md): a manifest checked against the suite and
the real tree, frozen into a task matrix bound to it by SHA-256, and the preconditions a
run of it checks before its first cell.

Modules, one job each: ``manifest`` (the YAML contract), ``digests`` (SHA-256 of zl's own
files and of a workload's), ``freeze`` (check and freeze), ``preconditions`` (what a
frozen run checks first).
"""
