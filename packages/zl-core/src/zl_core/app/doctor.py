"""``zl doctor`` as a function: what this machine and interpreter can do, and what is missing.

Each check is ``ok``, ``note`` (worth knowing, not blocking) or ``problem`` (blocks
what it is needed for). Then the three things zl does are judged: the IR-only screen
(triton alone, no device), timed cells (torch, a device) and telemetry beside them
(the vendor's sampler), each with what its missing pieces would add. torch and triton
are probed in a child process of the interpreter, so a broken vendor build cannot
crash zl itself.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import attrs

from zl_core.foundation import targets
from zl_core.foundation.backend import Backend
from zl_core.foundation.errors import NoDeviceError, ZlError
from zl_core.foundation.vendor_tools import check_tool
from zl_core.plugins.host import PluginHost

from .resolve import resolve_backend

PROBE_TIMEOUT_S = 120.0
#: How long the telemetry sampler gets to answer once (a healthy nvidia-smi: well under 1 s).
SAMPLER_PROBE_S = 15.0
PROBE_MARK = "ZL_DOCTOR_PROBE "
# Runs in the child: import each module, report versions or the error, and count
# the backend's devices through its torch namespace. Argv: extension, namespace.
PROBE_SCRIPT = r"""
import importlib, json, sys
def probe(name):
    try:
        module = importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # an interrupt still ends the probe
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
    except (Exception, SystemExit) as exc:  # an interrupt still ends the probe
        out["device_count_error"] = f"{type(exc).__name__}: {exc}"[:300]
print("ZL_DOCTOR_PROBE " + json.dumps(out), flush=True)
"""


@attrs.frozen(kw_only=True)
class Check:
    name: str
    status: str  # "ok" | "note" | "problem"
    detail: str


@attrs.frozen(kw_only=True)
class Capability:
    """One thing zl does on this machine: whether it can, and what is missing."""

    name: str
    ready: bool
    detail: str  # what it gives when ready; what is missing and what it would add when not


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
    # typeshed types sys.modules as modules only; None there is Python's documented block.
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
            backend = resolve_backend(host, backend_name)
        origin = host.backend_origin(backend)
        package = " ".join(p for p in (origin.package, origin.version) if p)
        checks.append(Check(name="backend", status="ok", detail=f"{backend.name} ({package})"))
    except NoDeviceError as exc:
        # Not a fault of the machine: timed cells need a device, the IR-only screen does not.
        checks.append(Check(name="backend", status="note", detail=str(exc)))
    except ZlError as exc:
        checks.append(Check(name="backend", status="problem", detail=str(exc)))

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
    # Last, so that a plugin whose hooks raised while the checks above asked shows too.
    for record in host.plugins:
        if record.status in ("failed", "broken"):
            what = "failed to load" if record.status == "failed" else "is broken"
            checks.append(Check(name="plugin", status="note",
                                detail=f"{record.name} from {record.package} {what}: {record.reason}"))
    return checks


def _missing(checks: list[Check], *names: str) -> list[Check]:
    return [c for c in checks if c.name in names and c.status == "problem"]


def capabilities(host: PluginHost, checks: list[Check]) -> list[Capability]:
    """The IR-only screen, timed cells and telemetry, judged from the checks."""
    by_name = {c.name: c for c in checks}
    compile_suites = [p.name for p in host.providers().values()
                      if getattr(p, "supports_compile_only", False)]
    ir_gaps = [f"{c.name} ({c.detail})" for c in _missing(checks, "interpreter", "triton")]
    if "triton" not in by_name and not ir_gaps:
        ir_gaps.append(f"triton ({by_name['torch'].detail})" if "torch" in by_name else "triton")
    if not compile_suites:
        ir_gaps.append("a suite that compiles without a device (pip install zl-flaggems)")
    if not host.backends():
        ir_gaps.append("a backend package to name the target (pip install a zl-backend-<vendor> package)")
    ir = Capability(
        name="IR-only screen", ready=not ir_gaps,
        detail=(f"zl screen --compile-only [--target {targets.expected(host.backends())}]: each "
                "side's TTGIR compiled in a fresh process and compared; no device, no latencies")
        if not ir_gaps else
               "missing " + "; ".join(ir_gaps) + "; would add: TTGIR verdicts per operator without a device")

    # Timed cells need every check but the optional ones to pass (backend, interpreter,
    # torch, triton, the torch extension, devices); without a backend, devices go unchecked.
    timed_gaps = [c for c in checks if c.name not in ("sampler", "plugin") and c.status != "ok"]
    timed = Capability(
        name="timed cells", ready=not timed_gaps,
        detail=("zl screen and zl ab on a device: latencies per shape, A/B rounds with verdicts "
                "(FASTER / SLOWER / NO_CHANGE)") if not timed_gaps else
               "missing " + "; ".join(f"{c.name} ({_short(c.detail)})" for c in timed_gaps) +
               "; would add: latencies, A/B rounds and their verdicts")

    sampler = by_name.get("sampler")
    tele_ready = timed.ready and sampler is not None and sampler.status == "ok"
    if tele_ready:
        tele_detail = "clocks, temperature, power and use sampled beside every A/B round"
    elif sampler is not None and sampler.status != "ok":
        tele_detail = (f"missing: {_short(sampler.detail)}; would add: clocks, temperature and power "
                       "beside each round, and the drift flags that read them")
    else:
        tele_detail = "needs timed cells first; would add: clocks, temperature and power beside each round"
    return [ir, timed, Capability(name="telemetry", ready=tele_ready, detail=tele_detail)]


def _short(text: str) -> str:
    """The first clause of a check's detail, for the one-line capability summary."""
    first = text.split(";")[0].strip()
    return first if len(first) <= 140 else first[:137] + "..."


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
    checks.append(_sampler_check(host, backend))
    return checks


def _sampler_check(host: PluginHost, backend: Backend) -> Check:
    """Which telemetry sampler campaigns would use: the backend's in-process one (a vendor
    library) where it samples, else its tool, asked once."""
    reading = host.sample_telemetry(backend, None)
    if reading is not None and reading.rows:
        return Check(name="sampler", status="ok",
                     detail=f"in use: {reading.sampler}, in-process ({len(reading.rows)} device(s) read)")
    # A library that is installed and cannot sample is named beside the tool that takes over.
    library = (f" ({reading.sampler} cannot sample: {reading.unavailable or 'it read no device'})"
               if reading is not None else "")
    argv = host.telemetry_command(backend, None)
    if not argv:
        return Check(name="sampler", status="note",
                     detail=f"{backend.name} declares no telemetry sampler{library}; campaigns run "
                            "without one")
    if not shutil.which(argv[0]):
        return Check(name="sampler", status="note",
                     detail=f"{argv[0]} is not on PATH{library}; campaigns run without telemetry")
    why = check_tool(argv, SAMPLER_PROBE_S)  # on PATH is not working: ask it once
    if why:
        return Check(name="sampler", status="problem",
                     detail=f"{why}{library}; campaigns would run without telemetry (clocks, "
                            "temperature, power)")
    return Check(name="sampler", status="ok",
                 detail=f"in use: {argv[0]} at {shutil.which(argv[0])} answers{library}")


@attrs.frozen(kw_only=True)
class DoctorOutcome:
    """The checks, the capabilities judged from them, and whether zl is usable here:
    the IR-only screen or timed cells (the first two capabilities) can run."""

    checks: tuple[Check, ...]
    capabilities: tuple[Capability, ...]

    @property
    def usable(self) -> bool:
        return any(c.ready for c in self.capabilities[:2])

    @property
    def problems(self) -> list[str]:
        return [c.name for c in self.checks if c.status == "problem"]


def doctor(host: PluginHost, backend_name: str | None, python: str) -> DoctorOutcome:
    checks = diagnose(host, backend_name, python)
    return DoctorOutcome(checks=tuple(checks), capabilities=tuple(capabilities(host, checks)))
