"""What binds a sealed campaign to its compiler: the build the cells' interpreter imports
(every file's SHA-256, the commit where the build records one) and the compiler's
variables the cells would inherit from the shell. ``zl freeze`` records both in the
matrix; a frozen run checks them before its first cell (:mod:`.preconditions`)."""

from __future__ import annotations

from collections.abc import Mapping

from zl_core.cells.cell_setup import inherited_by_cells
from zl_core.foundation import compiler_build, compiler_env
from zl_core.foundation.backend import Backend
from zl_core.foundation.module_origins import origins
from zl_core.interface.provider import Provider

from . import digests


def builds(modules: tuple[str, ...], imports: Mapping[str, str | None], python: str, *,
           cached: bool) -> dict[str, compiler_build.Build | None]:
    """The build of each of ``modules`` where ``python`` imports it (``imports`` where it
    names the module, else asked); None where it cannot."""
    asked = [m for m in modules if m not in imports]
    found = {**{m: imports[m] for m in modules if m in imports},
             **(origins(python, asked) if asked else {})}
    return {m: None if origin is None else compiler_build.build_of(m, origin, cached=cached)
            for m, origin in found.items()}


def frozen(backend: Backend, provider: Provider, imports: Mapping[str, str | None], python: str,
           switch_vars: tuple[str, ...], environ: Mapping[str, str],
           problems: list[str]) -> tuple[dict, dict]:
    """The matrix's ``compiler`` (each module's build, with its files' digests) and
    ``compiler_env`` (the variables the cells would inherit), every file read in full."""
    out = {}
    for module, build in builds(backend.compiler_modules, imports, python, cached=False).items():
        if build is None:
            if module not in imports:  # the imports' own check names those
                problems.append(f"compiler {module}: {python} cannot import it; freeze with the "
                                "interpreter the cells run (--python)")
            continue
        out[module] = build.to_json(with_files=True)
    return out, inherited_by_cells(provider, backend, switch_vars, environ)


def check(matrix: Mapping[str, object], backend: Backend, provider: Provider, imports: Mapping[str, str | None],
          python: str, switch_vars: tuple[str, ...], environ: Mapping[str, str],
          problems: list[str]) -> None:
    """Name the compiler module that is another build than the frozen one, and compiler
    variables this shell would pass the cells that differ from the frozen ones. A matrix
    frozen before either was bound is not held by it."""
    bound = matrix.get("compiler")
    if isinstance(bound, dict):
        now = builds(tuple(bound), imports, python, cached=False)
        ids = (compiler_build.build_id({m: b.digest for m, b in now.items() if b is not None}),
               compiler_build.build_id({m: str(b.get("digest")) for m, b in bound.items()}))
        for module, was in bound.items():
            build = now.get(module)
            if build is None:
                problems.append(f"compiler {module}: {python} cannot import it, frozen from "
                                f"{was.get('path')}")
            elif build.digest != was.get("digest"):
                changed = digests.differences(was.get("files") or {}, build.files)
                problems.append(
                    f"compiler {module}: {build.path} is another build than the one frozen (build "
                    f"{ids[0]}{_commit(build.commit)}, frozen {ids[1]}{_commit(was.get('commit'))}; "
                    f"{len(changed)} file(s): {', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''}"
                    "); run it with the frozen build, or freeze the manifest again")
    frozen_env = matrix.get("compiler_env")
    if isinstance(frozen_env, dict):
        was = frozen_env
        now_env = inherited_by_cells(provider, backend, switch_vars, environ)
        if now_env != was:
            problems.append(f"compiler env: this environment passes the cells "
                            f"{compiler_env.caliber_value(now_env)}, frozen with "
                            f"{compiler_env.caliber_value(was)}; set or unset them as frozen")


def _commit(commit: object) -> str:
    return f", commit {str(commit)[:12]}" if commit else ""
