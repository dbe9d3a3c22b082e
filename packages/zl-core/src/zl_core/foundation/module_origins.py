"""Where an interpreter imports modules from (a sealed campaign binds the paths its cells
import Triton and the provider's library from): looked up without importing them
(:func:`origins`), or imported, in order, as a cell imports them (:func:`imported`), which
also finds a module that is there but cannot load (a torch-less interpreter finds
FlagGems, but cannot import it)."""

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


_IMPORT_PROBE = """\
import importlib, json, sys
out = {}
for name in sys.argv[1:]:
    try:
        spec = importlib.import_module(name).__spec__
    except BaseException:  # noqa: BLE001 - any failure (SystemExit too) is "cannot import"
        spec = None
    origin = None if spec is None else (spec.origin or next(iter(spec.submodule_search_locations or []), None))
    out[name] = origin
print("ZL_ORIGINS " + json.dumps(out))
"""


def origins(python: str, modules: Sequence[str], *, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout_s: float = 60.0) -> dict[str, str | None]:
    """``{module: the file it would be imported from, or None}`` in ``python``; every
    module None when the interpreter cannot be asked (it is then named by the caller)."""
    return _probe(_PROBE, python, modules, env=env, cwd=cwd, timeout_s=timeout_s)


def imported(python: str, modules: Sequence[str], *, env: Mapping[str, str] | None = None,
             cwd: str | None = None, timeout_s: float = 300.0) -> dict[str, str | None]:
    """As :func:`origins`, but each module imported, in the order given, in one process:
    None for one that fails to import (its parent or a dependency missing or broken)."""
    return _probe(_IMPORT_PROBE, python, modules, env=env, cwd=cwd, timeout_s=timeout_s)


def _probe(code: str, python: str, modules: Sequence[str], *, env: Mapping[str, str] | None,
           cwd: str | None, timeout_s: float) -> dict[str, str | None]:
    try:
        proc = subprocess.run([python, "-c", code, *modules], capture_output=True, text=True,
                              env=dict(env) if env is not None else None, cwd=cwd,
                              timeout=timeout_s, check=False, stdin=subprocess.DEVNULL)
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
