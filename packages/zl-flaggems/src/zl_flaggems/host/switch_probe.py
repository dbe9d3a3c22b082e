"""Ask a Triton (stock or FlagTree) which switches it reads, in the cells' interpreter.

The question runs in a child process of the interpreter the cells run (never in
zl's own: the user's Triton build is the one that counts) and asks it four ways:

* ``triton._C.libtriton.get_cache_invalidating_env_vars()``: the variables Triton's
  C++ side reads that enter its compile-cache key. It returns only those set, so
  the child sets each asked name (and a list of candidates, to know the whole
  family for look-alike hints) before calling it.
* ``triton.knobs``: the environment variables behind every declared knob.
* Triton's Python sources (its backends included): a name read there literally
  through ``os.environ`` / ``os.getenv``, as a vendor backend may read its switch.
* With a compile-only target: whether the backend's hash (part of the cache key)
  differs between side A's and side B's values.

A name found none of these ways is not read by that compiler.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Mapping, Sequence

from zl_core.interface.switch_check import SwitchReport

from zl_flaggems.host.preflight import last_line, read_probe, shown_python

log = logging.getLogger(__name__)
#: The ways the probe asks that may fail on their own (the other ways still answer).
PARTIAL_ERRORS = {"knobs_error": "triton.knobs", "hash_error": "the backend hash",
                  "cache_key_error": "the compile-cache key variables"}

PROBE_PREFIX = "ZL_SWITCH_PROBE "
PROBE_TIMEOUT_S = 120.0

# Cache-key variables of stock Triton 3.4-3.6 and FlagTree's RLC family: candidates
# only (what the installed compiler answers decides), so that look-alike hints can
# name a compiler's relatives of a misspelled switch.
CANDIDATES = (
    "ALLOW_LHS_TMEM_LAYOUT_CONVERSION", "AMDGCN_ENABLE_DUMP", "AMDGCN_USE_BUFFER_ATOMICS",
    "AMDGCN_USE_BUFFER_OPS", "DISABLE_FAST_REDUCTION", "DISABLE_LLVM_OPT", "DISABLE_MMA_V3",
    "DISABLE_MMA_V5", "DISABLE_PTXAS_OPT", "LLVM_ENABLE_TIMING", "LLVM_EXTRACT_DI_LOCAL_VARIABLES",
    "LLVM_IR_ENABLE_DUMP", "LLVM_PASS_PLUGIN_PATH", "MLIR_DISABLE_MULTITHREADING", "MLIR_DUMP_PATH",
    "MLIR_ENABLE_DIAGNOSTICS", "MLIR_ENABLE_DUMP", "MLIR_ENABLE_TIMING", "NVPTX_ENABLE_DUMP",
    "STORE_TMEM_TO_GLOBAL_BYPASS_SMEM", "TRITON_DEFAULT_FP_FUSION", "TRITON_DISABLE_LINE_INFO",
    "TRITON_DISABLE_RESHAPE_ENCODING_INFERENCE", "TRITON_DUMP_MIR", "TRITON_ENABLE_ASAN",
    "TRITON_ENABLE_EXPERIMENTAL_CONSAN", "TRITON_ENABLE_LLVM_DEBUG", "TRITON_F32_DEFAULT",
    "TRITON_HIP_GLOBAL_PREFETCH", "TRITON_HIP_LOCAL_PREFETCH", "TRITON_HIP_USE_ASYNC_COPY",
    "TRITON_HIP_USE_BLOCK_PINGPONG", "TRITON_HIP_USE_IN_THREAD_TRANSPOSE", "TRITON_LLVM_DEBUG_ONLY",
    "TRITON_OVERRIDE_ARCH", "USE_IR_LOC",
    "FLAGTREE_RLC_ENHANCE", "FLAGTREE_MUSA_RLC_ENHANCE", "FLAGTREE_MUSA_RLC_PHASE_MASK",
    "FLAGTREE_PPU_RLC_ENHANCE", "FLAGTREE_PPU_RLC_PHASE_MASK", "FLAGTREE_HCU_RLC_ENHANCE",
    "FLAGTREE_HCU_RLC_PHASE_MASK", "FLAGTREE_METAX_RLC_ENHANCE", "FLAGTREE_METAX_RLC_PHASE_MASK",
)

# Switches seen to change TTGIR on stock Triton (docs/validation, tests/test_compile_only.py),
# offered as hints when they are read by the compiler asked.
KNOWN_EFFECTS = {
    "DISABLE_MMA_V3": "--switch DISABLE_MMA_V3 (fp16/bf16 GEMMs: Hopper's MMA v3 -> v2)",
    "TRITON_F32_DEFAULT": "--switch TRITON_F32_DEFAULT --a ieee --b tf32 (float32 dots)",
}

# Runs in the cells' interpreter. argv: JSON {name: [a, b]}, JSON candidates, and the
# compile-only target as JSON [kind, arch, warp size] ("" without one).
_PROBE = r"""
import json, os, re, sys
out = {"python": sys.executable}
def done():
    print("ZL_SWITCH_PROBE " + json.dumps(out), flush=True)
    sys.exit(0)
try:
    import triton
except BaseException as exc:
    out["error"] = ("cannot import triton: " + type(exc).__name__ + ": " + str(exc)).splitlines()[0][:300]
    done()
asked, candidates, target = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
out["version"] = str(getattr(triton, "__version__", "") or "")
how = {name: [] for name in asked}
knobs = set()
try:
    import triton.knobs as k
    for group in vars(k).values():
        if isinstance(group, k.base_knobs):
            knobs |= {d.key for d in group.knob_descriptors.values()}
except Exception as exc:  # a Triton without knobs: the other three ways still answer
    out["knobs_error"] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:200]
source = set()
root = os.path.dirname(triton.__file__)
pattern = re.compile(r"(?:getenv|environ\.get|environ)\s*[\(\[]\s*['\"]([A-Z][A-Z0-9_]{2,})['\"]")
for folder, _, files in os.walk(root):
    for f in files:
        if f.endswith(".py"):
            try:
                with open(os.path.join(folder, f), encoding="utf-8", errors="replace") as fh:
                    source |= set(pattern.findall(fh.read()))
            except OSError:
                pass
if target:
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend
        backend = make_backend(GPUTarget(*json.loads(target)))
        for name, (a, b) in asked.items():
            hashes = []
            for value in (a, b):
                if value:
                    os.environ[name] = value
                else:
                    os.environ.pop(name, None)
                hashes.append(backend.hash())
            os.environ.pop(name, None)
            if hashes[0] != hashes[1]:
                how[name].append("backend hash")
    except Exception as exc:
        out["hash_error"] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:200]
cache_key = set()
try:
    from triton._C.libtriton import get_cache_invalidating_env_vars
    for name in set(candidates) | set(asked):
        values = asked.get(name) or ["1", "1"]
        os.environ[name] = values[1] or values[0] or "1"
    cache_key = set(get_cache_invalidating_env_vars())
except Exception as exc:
    out["cache_key_error"] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:200]
for name in asked:
    if name in cache_key:
        how[name].insert(0, "compile-cache key")
    if name in knobs:
        how[name].append("knob")
    if name in source and name not in knobs:
        how[name].append("read in triton's Python")
out["how"] = how
out["known"] = sorted(cache_key | knobs | source)
done()
"""


def ask_triton(python: str, names: Sequence[str], a_values: Mapping[str, str],
               b_values: Mapping[str, str], *, target: str | None = None,
               env: Mapping[str, str] | None = None,
               timeout_s: float = PROBE_TIMEOUT_S) -> SwitchReport:
    """Which of ``names`` the Triton importable by ``python`` reads (see the module)."""
    shown = shown_python(python)
    asked = {n: [a_values.get(n, ""), b_values.get(n, "")] for n in names}
    child_env = {k: v for k, v in (env if env is not None else os.environ).items() if k not in asked}
    if target:
        from zl_flaggems.common.compile_targets import CompileOnlyError, parse_target

        try:  # the backend that owns the target knows its warp size
            triple = json.dumps(list(parse_target(target)))
        except CompileOnlyError as exc:
            return SwitchReport(compiler=f"the Triton of {shown}", error=str(exc))
    else:
        triple = ""
    argv = [python, "-c", _PROBE, json.dumps(asked), json.dumps(list(CANDIDATES)), triple]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              env=child_env, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return SwitchReport(compiler=f"the Triton of {shown}", error=f"cannot run it: {exc}")
    data = read_probe(proc.stdout, PROBE_PREFIX)
    if data is None:
        return SwitchReport(compiler=f"the Triton of {shown}",
                            error=f"the probe died: {last_line(proc)}")
    if data.get("error"):
        return SwitchReport(compiler=f"the Triton of {shown}", error=data["error"])
    compiler = f"triton {data.get('version') or '(no version)'} in {shown}"
    for key, way in PARTIAL_ERRORS.items():
        if data.get(key):  # a switch read only that way would show as unread: say why
            log.warning("switch check: %s could not be asked of %s (%s)", way, compiler, data[key])
    how = {n: list(v) for n, v in data.get("how", {}).items()}
    known = tuple(data.get("known", ()))
    return SwitchReport(
        compiler=compiler,
        read={n: ", ".join(v) for n, v in how.items() if v},
        unread=tuple(n for n in names if not how.get(n)),
        known=known,
        suggestions=tuple(hint for name, hint in KNOWN_EFFECTS.items() if name in known),
    )
