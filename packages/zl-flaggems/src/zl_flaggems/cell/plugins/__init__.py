"""pytest plugins loaded into a cell process with ``-p zl_flaggems.cell.plugins.<name>``."""
