"""Rules shared by the engine and the reports: the IR verdict, pairing rows,
a shape's series across rounds, status.tsv and telemetry drift.
"""
