"""zl's benchmark providers: FlagGems checkouts (and the built-in suite).

Importing this package is cheap and never imports torch, triton or flag_gems;
only the pytest plugins under :mod:`zl_flaggems.cell.plugins` touch them, inside a
cell process.
"""

__version__ = "0.1.0"
