"""The built-in suite's compile-only sealed manifest the sealed-campaign tests freeze:
its head (everything before the workloads), shared so each test names only its own."""

BUILTIN_HEAD = """\
schema: 1
campaign: builtin-ir-only
claim: DISABLE_MMA_V3 changes the TTGIR of the built-in GEMM compiled for sm_90
suite: builtin
sources: []
backend: cuda
compile_only: true
target: cuda:90
switch: {name: DISABLE_MMA_V3, a: 0, b: 1}
workloads:
"""
