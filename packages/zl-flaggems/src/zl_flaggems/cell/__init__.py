"""The cell's side: what runs inside a cell process, never in the orchestrator.

The pytest plugins (:mod:`zl_flaggems.cell.plugins`, loaded with ``-p``), the
modules they share (the cell contract as they read it, markers, the phase and row
clocks, graph timing, the TTGIR and autotune bookkeeping, crash-safe flushing) and
the compile-only runner (``python -m zl_flaggems.cell.compile_only``). Nothing here
imports :mod:`zl_flaggems.host`: a cell does not load the orchestrator.
"""
