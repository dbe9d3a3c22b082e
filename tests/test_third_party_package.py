"""Real packages in a fresh virtualenv: zl-core, zl-backend-musa, the packages/_template
backend, a backend that fails to import, one whose import code calls ``sys.exit(7)``
and one whose device hook raises, built as wheels and pip-installed, then found
through their entry points by the installed ``zl`` command.

The virtualenv is made with ``python -m venv`` (no system site-packages); pip fetches
zl-core's own dependencies (pluggy, attrs, pyyaml, rich) from the package index.
This is the slowest test module (about half a minute), kept in the default run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_tools import calls, path_with, write_tool

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"
VENDOR_PACKAGES = ("zl-backend-cuda", "zl-backend-musa", "zl-backend-rocm", "zl-backend-ascend")
S5000_SAMPLE = ('{"Attached GPUs": "8", "GPU": [{"Index": "7", "Temperature": {"GPU Current Temp": "36C"}, '
                '"Clocks": {"Graphics": "1888MHz", "Memory": "2500MHz", "Video": "0MHz"}, '
                '"Power Readings": {"Power Draw ": "477.68W", "Current Power Limit": "950.00W"}, '
                '"Utilization": {"Gpu": "87%", "Memory": "14%"}}]}')
EXAMPLE_OUTPUT = ("example-smi 1.0 -- 2 devices\n"
                  "device=0 core_mhz=1500 mem_mhz=1200 temp_c=41 power_w=98.5 busy_pct=37\n"
                  "device=1 core_mhz=1410 mem_mhz=1200 temp_c=44 power_w=101.0 busy_pct=52\n")
PYPROJECT = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "zl-backend-{name}"
version = "0.0.1"
dependencies = ["zl-core>=0.1.0"]

[project.entry-points.zl]
{name} = "zl_backend_{name}.plugin"

[tool.hatch.build.targets.wheel]
packages = ["src/zl_backend_{name}"]
"""
# Third-party plugins that misbehave, by name -> their plugin module.
MISBEHAVING = {
    "broken": "raise ImportError('libexample_runtime.so.3: cannot open shared object file')\n",
    "exits": "import sys\nsys.exit(7)\n",
    "raisy": (
        "from zl_core import Backend, hookimpl\n"
        "@hookimpl\n"
        "def zl_backends():\n"
        "    return [Backend(name='raisy', visibility_env_keys=('RAISY_VISIBLE_DEVICES',))]\n"
        "@hookimpl\n"
        "def zl_enumerate_devices(backend, explicit):\n"
        "    raise RuntimeError('raisy driver exploded')\n"),
}


def _package(work: Path, name: str, plugin: str) -> Path:
    root = work / f"zl-backend-{name}"
    (root / "src" / f"zl_backend_{name}").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT.replace("{name}", name))
    (root / "src" / f"zl_backend_{name}" / "__init__.py").write_text("")
    (root / "src" / f"zl_backend_{name}" / "plugin.py").write_text(plugin)
    return root


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False, **kwargs)
    assert proc.returncode == 0, f"{argv} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


def _clean_env(**extra) -> dict[str, str]:
    """This environment without zl's variables, device masks or another Python's paths
    (pip's own settings, such as an index mirror, are kept)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ZL_") and not k.endswith("_VISIBLE_DEVICES")
           and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1", **extra)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("thirdparty")
    misbehaving = [_package(work, name, plugin) for name, plugin in MISBEHAVING.items()]

    wheels = work / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          "--wheel-dir", wheels, PACKAGES / "zl-core", PACKAGES / "zl-backend-musa",
          PACKAGES / "_template", *misbehaving], env=_clean_env())
    env_dir = work / "venv"
    _run([sys.executable, "-m", "venv", env_dir], env=_clean_env())
    python = env_dir / "bin" / "python"
    # The wheel files themselves satisfy zl-core>=0.1.0; only its own deps come from the index.
    _run([python, "-m", "pip", "install", "--quiet", *sorted(wheels.glob("*.whl"))],
         env=_clean_env(), timeout=600)
    return env_dir


def _zl(venv: Path, *args, path: str | None = None) -> subprocess.CompletedProcess:
    env = _clean_env(PATH=path or path_with(venv / "bin"))
    return subprocess.run([str(venv / "bin" / "zl"), *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def test_the_venv_is_fresh_and_holds_no_torch_or_triton(venv):
    python = venv / "bin" / "python"
    probe = ("import sys; print(sys.prefix != sys.base_prefix); import importlib.util as u; "
             "print([m for m in ('torch', 'triton', 'zl_backend_cuda') if u.find_spec(m)])")
    proc = _run([python, "-c", probe])
    assert proc.stdout.split() == ["True", "[]"]
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg


def test_backends_are_discovered_through_their_entry_points(venv):
    proc = _zl(venv, "backends", "--json")
    assert proc.returncode == 0, proc.stderr
    listing = json.loads(proc.stdout)
    by_name = {b["name"]: b for b in listing["backends"]}
    assert set(by_name) == {"example", "musa", "raisy"}
    assert (by_name["example"]["package"], by_name["example"]["version"]) == ("zl-backend-example", "0.1.0")
    assert by_name["example"]["aliases"] == ["ex"]
    assert (by_name["musa"]["package"], by_name["musa"]["version"]) == ("zl-backend-musa", "0.1.0")
    plugins = {p["name"]: p for p in listing["plugins"]}
    assert plugins["broken"]["status"] == "failed"
    assert plugins["broken"]["package"] == "zl-backend-broken"
    assert "libexample_runtime.so.3" in plugins["broken"]["reason"]
    assert plugins["example"]["status"] == plugins["musa"]["status"] == "loaded"
    assert (plugins["exits"]["status"], plugins["exits"]["reason"]) == ("failed", "SystemExit: 7")
    assert plugins["raisy"]["status"] == "broken"
    assert "zl_enumerate_devices raised RuntimeError: raisy driver exploded" in plugins["raisy"]["reason"]


def test_misbehaving_plugins_are_named_and_every_command_still_works(venv, tmp_path):
    text = _zl(venv, "backends")
    assert text.returncode == 0, text.stderr
    assert "exits [zl-backend-exits 0.0.1] failed: SystemExit: 7" in text.stdout
    assert "raisy [zl-backend-raisy 0.0.1] broken: zl_enumerate_devices raised" in text.stdout
    # The other backends still work, and the broken one is diagnosed, not crashed on.
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "mthreads-gmi", S5000_SAMPLE)
    sample = _zl(venv, "telemetry", "--backend", "musa", "--device", "7", "--once",
                 path=os.pathsep.join([str(bin_dir), str(venv / "bin"), "/usr/bin", "/bin"]))
    assert sample.returncode == 0 and sample.stdout.splitlines()[1].split("\t")[2] == "1888"
    doctor = _zl(venv, "doctor", "--backend", "raisy")
    out = doctor.stdout + doctor.stderr
    assert doctor.returncode in (0, 2) and "Traceback" not in out
    assert "raisy" in out and "zl_enumerate_devices raised RuntimeError: raisy driver exploded" in out


def test_third_party_backend_resolves_by_alias_and_its_parser_is_used(venv, tmp_path):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "example-smi", EXAMPLE_OUTPUT)
    proc = _zl(venv, "telemetry", "--backend", "EX", "--once",
               path=os.pathsep.join([str(bin_dir), str(venv / "bin"), "/usr/bin", "/bin"]))
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("\t") for line in proc.stdout.splitlines()]
    assert lines[0] == ["timestamp", "index", "sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "util_pct"]
    assert [row[1:] for row in lines[1:]] == [["0", "1500", "1200", "41", "98.5", "37"],
                                              ["1", "1410", "1200", "44", "101.0", "52"]]
    assert calls(bin_dir) == [["--query"]]


def test_installed_musa_backend_samples_real_mthreads_gmi_output(venv, tmp_path):
    bin_dir = tmp_path / "bin"
    write_tool(bin_dir, "mthreads-gmi", S5000_SAMPLE)
    proc = _zl(venv, "telemetry", "--backend", "mthreads", "--device", "7", "--once",
               path=os.pathsep.join([str(bin_dir), str(venv / "bin"), "/usr/bin", "/bin"]))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].split("\t")[1:] == ["7", "1888", "2500", "36", "477.68", "87"]


def test_unknown_backend_in_the_installed_command(venv):
    proc = _zl(venv, "telemetry", "--backend", "cuda", "--once")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "example (aliases: ex)" in proc.stderr and "musa (aliases:" in proc.stderr


def _project(package: str) -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((PACKAGES / package / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize("package", ["zl-core", *VENDOR_PACKAGES, "_template"])
def test_no_package_requires_torch_or_triton(package):
    project = _project(package)
    deps = [d.lower() for d in project.get("dependencies", [])]
    for group in project.get("optional-dependencies", {}).values():
        deps += [d.lower() for d in group]
    names = {re.match(r"[a-z0-9_.-]+", d).group(0).replace("_", "-") for d in deps}
    assert not names & {"torch", "triton", "torch-musa", "torch-npu", "flagtree"}
    if package == "_template":  # a third party's backend: the zl-core API it was written to
        assert deps == ["zl-core>=0.1.0,<0.2"]
    elif package != "zl-core":  # first-party backends move in lockstep with zl-core
        assert project["dependencies"] == ["zl-core==0.1.0"]
        # Optional only: the CUDA backend's NVML sampler (nvidia-smi without it).
        extras = project.get("optional-dependencies", {})
        assert extras == ({"nvml": ["nvidia-ml-py>=11.450.51"]} if package == "zl-backend-cuda" else {})


@pytest.mark.parametrize("package", VENDOR_PACKAGES)
def test_vendor_package_declares_one_entry_point_to_its_plugin(package):
    project = _project(package)
    vendor = package.removeprefix("zl-backend-")
    assert project["entry-points"]["zl"] == {vendor: f"zl_backend_{vendor}.plugin"}
    assert project["version"] == "0.1.0"
