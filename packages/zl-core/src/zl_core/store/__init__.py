"""The run folder, typed: where every file of a campaign and of a cell lives, and how the
campaign's own record (``campaign.json``) is read and written.

Below the engine: the engine (``zl_core.campaigns``) writes through it, and the report,
the IR readers, ``series`` and ``status`` read through it; it imports none of them.
"""
