"""The plugin host: hook specifications, loading entry points in isolation, and
what asks a backend or provider plugin something (devices, telemetry, cells' rows).
"""
