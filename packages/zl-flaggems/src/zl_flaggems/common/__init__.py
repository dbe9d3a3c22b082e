"""What both sides use, each for a reason of its own module.

``gems_env``: FlagGems' vendor and tuner-cache rules, applied by the providers when
they build a cell's environment and by the vendor plugin inside a cell started by
hand. ``plugin_order``: the cell's ``-p`` list, planned by the providers, and the
timer rule the timing plugin applies to ``ZL_TIMER`` again inside the cell.
``autotune_records``: the record files a cell writes and replays, which the sweep-shard
merge reads and writes on the orchestrator. ``compile_targets``: a compile-only target
as the provider checks it and the cell compiles for it. Nothing here imports torch,
triton or flag_gems, nor either side.
"""
