"""One cell: one process, one operator, one side, one device; its set-up, guard,
warm start (zygote), liveness, device lock and sharded sweeps.
"""
