"""A cell's rows, whoever wrote them: zl's ``results.json``, else the provider's reading.

:mod:`zl_core.interface.rows` holds the neutral rows and reads ``results.json``; a cell without it
(FlagGems' printed table, for instance) is read by the provider its identity names,
found through the plugin host. That lookup is why this sits above the host, and rows
below the provider that returns them.
"""

from __future__ import annotations

from pathlib import Path

from zl_core.foundation.errors import BadInputError
from zl_core.interface.caliber import read_identity
from zl_core.interface.picks import Pick
from zl_core.interface.provider import Provider
from zl_core.interface.rows import RESULTS_NAME, CellRows, Row, read_results
from zl_core.plugins.host import PluginHost, plugin_host


def read_cell(cell_dir: Path, host: PluginHost | None = None) -> CellRows:
    """The rows of one cell directory: its results.json, else what its provider reads.

    The provider is the one the identity names; an identity that names none
    (older runs) is offered to each installed provider until one finds rows.
    ``host`` defaults to the process's plugin host.
    """
    cell_dir = Path(cell_dir)
    if (cell_dir / RESULTS_NAME).is_file():
        return read_results(cell_dir)
    answers = [provider.read_rows(cell_dir) for provider in _readers(cell_dir, host)]
    found = [a for a in answers if a.source is not None]
    return (found or answers or [read_results(cell_dir)])[0]


def _readers(cell_dir: Path, host: PluginHost | None) -> list[Provider]:
    try:
        identity = read_identity(cell_dir)
        named = identity.provider if identity is not None else None
    except BadInputError:
        named = None
    providers = (host or plugin_host()).providers()
    if named in providers:
        return [providers[named]]
    return [p for _, p in sorted(providers.items())]


def read_rows(cell_dir: Path, host: PluginHost | None = None) -> list[Row]:
    """Just the rows (see :func:`read_cell`)."""
    return list(read_cell(cell_dir, host).rows)


def read_picks(cell_dir: Path, host: PluginHost | None = None) -> list[Pick] | None:
    """The autotune picks a recording cell kept, read by the provider its identity names
    (None: no provider reads any there)."""
    for provider in _readers(Path(cell_dir), host):
        picks = provider.autotune_picks(Path(cell_dir))
        if picks is not None:
            return picks
    return None
