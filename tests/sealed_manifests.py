"""The heads (everything before the workloads) of the sealed manifests the tests freeze,
shared so each test names only its own: the built-in suite's compile-only campaign, and
the fake host's sleepy A/B campaign (:func:`sleepy_head`)."""

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


def sleepy_head(campaign: str, claim: str, *more: str) -> str:
    """An A/B campaign of the sleepy suite on the fake host's device 0, 4 rounds,
    FAKE_SWITCH 0 -> 1, no launch floor; ``more`` are further top-level lines."""
    return "".join(f"{line}\n" for line in (
        "schema: 1", f"campaign: {campaign}", f"claim: {claim}", "suite: sleepy", "sources: []",
        "backend: cuda", 'device: "0"', "device_name: NVIDIA Fake H200",
        'switch: {name: FAKE_SWITCH, a: "0", b: "1"}', "rounds: 4", "launch_floor: 0", *more,
        "workloads:"))
