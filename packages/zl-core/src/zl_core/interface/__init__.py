"""What crosses a cell's boundary and the provider interface: the ZL_* names,
the cell identity (caliber), rows, the TTGIR dump's layout, phases, operator specs.
"""
