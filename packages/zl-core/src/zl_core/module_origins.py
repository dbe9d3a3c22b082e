"""Where an interpreter would import modules from, asked without importing them (a
sealed campaign binds the paths its cells import Triton and the provider's library from)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence

_PROBE = """\
import importlib.util, json, sys
out = {}
for name in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # a parent package that fails to import: None, named by the caller
        spec = None
    origin = None if spec is None else (spec.origin or next(iter(spec.submodule_search_locations or []), None))
    out[name] = origin
print("ZL_ORIGINS " + json.dumps(out))
"""


def origins(python: str, modules: Sequence[str], *, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout_s: float = 60.0) -> dict[str, str | None]:
    """``{module: the file it would be imported from, or None}`` in ``python``; every
    module None when the interpreter cannot be asked (it is then named by the caller)."""
    try:
        proc = subprocess.run([python, "-c", _PROBE, *modules], capture_output=True, text=True,
                              env=dict(env) if env is not None else None, cwd=cwd,
                              timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):  # None refuses the seal: freeze and run name it
        return dict.fromkeys(modules)
    for line in proc.stdout.splitlines():
        if line.startswith("ZL_ORIGINS "):
            try:
                found = json.loads(line[len("ZL_ORIGINS "):])
            except ValueError:
                break
            return {m: (str(found[m]) if isinstance(found.get(m), str) else None) for m in modules}
    return dict.fromkeys(modules)
