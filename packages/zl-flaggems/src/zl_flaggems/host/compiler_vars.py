"""The variables the providers' cells' compiler (Triton, or FlagTree, its fork) and library
(FlagGems' protocol) read: what a cell records as it got them and compares where it
inherited them (the caliber field ``compiler_env``, :mod:`zl_core.foundation.compiler_env`).

From triton 3.6.0: its knobs (``triton.knobs``), the variables its C++ side reads into the
compile-cache key (``get_cache_invalidating_env_vars``; :mod:`.switch_probe` asks them), and
the LLVM/MLIR debugging ones its library reads (``MLIR_ENABLE_DUMP``, ``LLVM_IR_ENABLE_DUMP``).
FlagTree's own are ``FLAGTREE_*``; FlagGems' ``GEMS_*`` and ``FLAGGEMS_*``.
"""

from __future__ import annotations

from zl_core.foundation.compiler_env import CompilerEnv

#: Triton's: prefixes of its knobs and C++ switches, and the names outside them.
TRITON_READS = (
    "TRITON_*", "MLIR_*", "LLVM_*", "NVPTX_*", "AMDGCN_*", "PTXAS_OPTIONS", "USE_IR_LOC",
    "DISABLE_MMA_V*", "DISABLE_LLVM_OPT", "DISABLE_PTXAS_OPT", "DISABLE_FAST_REDUCTION",
    "ALLOW_LHS_TMEM_LAYOUT_CONVERSION", "STORE_TMEM_TO_GLOBAL_BYPASS_SMEM",
)
FLAGTREE_READS = ("FLAGTREE_*",)
FLAGGEMS_READS = ("GEMS_*", "FLAGGEMS_*")
#: Matched above but deciding no code: the checkout zl is pointed at (its commit is the
#: identity's ``provider_commit``).
IGNORES = ("FLAGGEMS_DIR",)
#: Triton's switches that choose one thing together: the MMA generation a dot lowers to.
FAMILIES = (("DISABLE_MMA_V*",),)

COMPILER_ENV = CompilerEnv(reads=(*TRITON_READS, *FLAGTREE_READS, *FLAGGEMS_READS), ignores=IGNORES,
                           families=FAMILIES)
