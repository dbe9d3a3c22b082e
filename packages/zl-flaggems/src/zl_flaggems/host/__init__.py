"""The orchestrator's side: what runs in the ``zl`` process that plans and launches cells.

The ``zl`` entry point (:mod:`~zl_flaggems.host.hooks`), the FlagGems and built-in
suite providers, their preflight checks, sealing, the switch probe, the sweep-shard
merge and the printed-table reader. It names the cell's plugins only as strings for
``-p`` (:mod:`zl_flaggems.common.plugin_order`) and never imports
:mod:`zl_flaggems.cell`.
"""
