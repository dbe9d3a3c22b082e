"""``zl doctor``: can this machine and interpreter run cells on a backend?

Each check prints ``ok``, ``note`` (worth knowing, not blocking) or ``problem``.
Exit 0 when usable, 2 when any problem is found. torch and triton are probed in a
child process of this interpreter, so a broken vendor build cannot crash zl itself.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import attrs

from zl_core.backend import Backend
from zl_core.cli import _common
from zl_core.errors import EXIT_OK, EXIT_USAGE, ZlError
from zl_core.host import PluginHost, plugin_host

PROBE_TIMEOUT_S = 120.0
PROBE_MARK = "ZL_DOCTOR_PROBE "
# Runs in the child: import each module, report versions or the error, and count
# the backend's devices through its torch namespace. Argv: extension, namespace.
PROBE_SCRIPT = r"""
import importlib, json, sys
def probe(name):
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        text = (str(exc).strip().splitlines() or [""])[0][:300]
        return {"ok": False, "error": f"{type(exc).__name__}: {text}".rstrip(": ")}
    return {"ok": True, "version": str(getattr(module, "__version__", "") or "")}
ext, ns = sys.argv[1], sys.argv[2]
out = {"torch": probe("torch"), "triton": probe("triton")}
if ext:
    out["extension"] = probe(ext)
if ns and out["torch"]["ok"] and out.get("extension", {"ok": True})["ok"]:
    try:
        import torch
        api = getattr(torch, ns, None)
        out["device_count"] = None if api is None else int(api.device_count())
    except BaseException as exc:
        out["device_count_error"] = f"{type(exc).__name__}: {exc}"[:300]
print("ZL_DOCTOR_PROBE " + json.dumps(out), flush=True)
"""


@attrs.frozen(kw_only=True)
class Check:
    name: str
    status: str  # "ok" | "note" | "problem"
    detail: str


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="check that a backend is usable from this interpreter",
                       description="Check the backend, this interpreter's torch and triton, the "
                                   "devices and the telemetry sampler. Exit 0 when usable, 2 when not.")
    p.add_argument("--backend", help=f"backend name or alias (default: ${_common.BACKEND_ENV}, "
                                     "or the only one installed)")
    p.add_argument("--python", default=sys.executable,
                   help="interpreter to check (default: this one)")
    p.set_defaults(handler=run)


def probe_interpreter(python: str, backend: Backend | None,
                      timeout: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """What ``python`` can import, from a child process; {"error": ...} if it died."""
    ext = backend.torch_extension if backend else ""
    ns = backend.torch_namespace if backend else ""
    try:
        proc = subprocess.run([python, "-c", PROBE_SCRIPT, ext, ns], capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"importing torch/triton did not finish within {timeout:g}s"}
    except OSError as exc:
        return {"error": f"cannot run {python}: {exc}"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(PROBE_MARK):
            return json.loads(line[len(PROBE_MARK):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"the import probe died (exit {proc.returncode}): {tail}"}


@contextlib.contextmanager
def _torch_blocked() -> Iterator[None]:
    """Make ``import torch`` fail in this process for a moment, so that device
    discovery cannot load a vendor build into zl (a None in sys.modules stops it)."""
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.modules.pop("torch", None)


def _module_check(name: str, result: dict[str, Any] | None, python: str, hint: str) -> Check:
    if result is None:
        return Check(name=name, status="problem", detail=f"not checked ({hint})")
    if result.get("ok"):
        return Check(name=name, status="ok", detail=f"{name} {result.get('version') or '(no version)'}")
    return Check(name=name, status="problem",
                 detail=f"{python} cannot import {name}: {result.get('error')}; {hint}")


def diagnose(host: PluginHost, backend_name: str | None, python: str) -> list[Check]:
    checks: list[Check] = []
    backend: Backend | None = None
    try:
        with _torch_blocked():
            backend = _common.resolve_backend(host, backend_name)
        origin = host.backend_origin(backend)
        package = " ".join(p for p in (origin.package, origin.version) if p)
        checks.append(Check(name="backend", status="ok", detail=f"{backend.name} ({package})"))
    except ZlError as exc:
        checks.append(Check(name="backend", status="problem", detail=str(exc)))
    for record in host.plugins:
        if record.status == "failed":
            checks.append(Check(name="plugin", status="note",
                                detail=f"{record.name} from {record.package} failed to load: {record.reason}"))

    if python == sys.executable:
        checks.append(Check(name="interpreter", status="ok",
                            detail=f"{python} (Python {sys.version.split()[0]})"))
    elif shutil.which(python):
        checks.append(Check(name="interpreter", status="ok", detail=str(shutil.which(python))))
    else:
        checks.append(Check(name="interpreter", status="problem",
                            detail=f"{python} is not an executable interpreter; pass --python PATH"))

    probe = probe_interpreter(python, backend)
    if "error" in probe:
        checks.append(Check(name="torch", status="problem", detail=probe["error"]))
    else:
        checks.append(_module_check("torch", probe.get("torch"), python,
                                    "install your vendor's torch build into this interpreter"))
        checks.append(_module_check("triton", probe.get("triton"), python,
                                    "install triton (or FlagTree) into this interpreter"))
        if backend is not None and backend.torch_extension:
            checks.append(_module_check(backend.torch_extension, probe.get("extension"), python,
                                        f"the {backend.name} backend needs it for torch.{backend.torch_namespace}"))

    if backend is not None:
        checks.extend(_device_checks(host, backend, probe))
    return checks


def _device_checks(host: PluginHost, backend: Backend, probe: dict[str, Any]) -> list[Check]:
    checks = []
    with _torch_blocked():
        devices = host.enumerate_devices(backend)
    count = probe.get("device_count")
    namespace = f"torch.{backend.torch_namespace}" if backend.torch_namespace else "torch"
    if devices and count == 0:
        checks.append(Check(name="devices", status="problem",
                            detail=f"{len(devices)} found ({', '.join(devices)}) but {namespace} sees 0: "
                                   "is this interpreter's torch a build for another vendor, or CPU-only?"))
    elif devices:
        detail = f"{len(devices)} found: {', '.join(devices)}"
        if isinstance(count, int):
            detail += f" ({namespace} sees {count})"
        checks.append(Check(name="devices", status="ok", detail=detail))
    elif isinstance(count, int) and count > 0:
        checks.append(Check(name="devices", status="ok", detail=f"{namespace} sees {count}"))
    else:
        why = probe.get("device_count_error") or (
            f"{namespace} sees 0" if isinstance(count, int) else "torch could not be asked")
        keys = ", ".join(backend.visibility_env_keys) or "none"
        checks.append(Check(name="devices", status="problem",
                            detail=f"no {backend.name} device found ({why}; visibility variables: "
                                   f"{keys}); run on a machine with one, or compare generated code "
                                   "only with --compile-only"))
    argv = host.telemetry_command(backend, None)
    if not argv:
        checks.append(Check(name="sampler", status="note",
                            detail=f"{backend.name} declares no telemetry sampler; campaigns run without one"))
    elif shutil.which(argv[0]):
        checks.append(Check(name="sampler", status="ok", detail=f"{argv[0]} at {shutil.which(argv[0])}"))
    else:
        checks.append(Check(name="sampler", status="note",
                            detail=f"{argv[0]} is not on PATH; campaigns run without telemetry"))
    return checks


def run(args: argparse.Namespace) -> int:
    checks = diagnose(plugin_host(), args.backend, args.python)
    width = max(len(c.name) for c in checks)
    for c in checks:
        print(f"{c.status:<8} {c.name:<{width}}  {c.detail}")
    problems = [c for c in checks if c.status == "problem"]
    if problems:
        print(f"not usable: {len(problems)} problem(s): {', '.join(c.name for c in problems)}")
        return EXIT_USAGE
    print("usable")
    return EXIT_OK
