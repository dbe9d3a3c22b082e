"""Every package declares what it imports and nothing else; the zl packages pin each
other; nothing requires the user's own torch or Triton (tests/test_third_party_package.py
checks the vendor builds' names)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

PACKAGES = Path(__file__).resolve().parents[1] / "packages"
FIRST_PARTY = sorted(p.name for p in PACKAGES.iterdir()
                     if (p / "pyproject.toml").is_file() and p.name != "_template")
# Import name -> distribution name, for every third-party module a package may import.
DISTRIBUTION = {"attrs": "attrs", "pluggy": "pluggy", "rich": "rich", "yaml": "pyyaml",
                "pytest": "pytest", "distributed": "distributed", "pynvml": "nvidia-ml-py"}
# The user's own builds (a vendor's torch, FlagTree as triton): imported, never declared,
# and in zl-core never at import time (checked in tests/test_architecture.py too).
USERS_BUILD = {"torch", "triton"}
# Imported only inside functions, behind an extra or as an optional package.
OPTIONAL = {"zl-core": {"distributed": "dask", "zl_report": "report"},
            "zl-backend-cuda": {"pynvml": "nvml"}}


def _project(package: str) -> dict:
    return tomllib.loads((PACKAGES / package / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def _dist(module: str) -> str | None:
    if module.startswith("zl_"):
        return "zl-" + module[3:].replace("_", "-")
    return DISTRIBUTION.get(module)


def _imports(package: str) -> dict[str, set[str]]:
    """Top-level module -> {"top", "lazy"} for every non-stdlib import of the package."""
    src = next((PACKAGES / package / "src").iterdir())
    found: dict[str, set[str]] = {}
    for path in src.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                if root in sys.stdlib_module_names or root in ("__future__", src.name):
                    continue
                found.setdefault(root, set()).add("top" if id(node) in top else "lazy")
    return found


@pytest.mark.parametrize("package", [*FIRST_PARTY, "_template"])
def test_a_package_declares_what_it_imports_and_nothing_else(package):
    project = _project(package)
    declared = {_name(d) for d in project.get("dependencies", [])}
    optional = OPTIONAL.get(package, {})
    needed = set()
    for module, where in _imports(package).items():
        if module in USERS_BUILD:
            continue
        if module in optional:
            assert where == {"lazy"}, f"{package} imports the optional {module} at import time"
            extra = project["optional-dependencies"][optional[module]]
            assert _dist(module) in {_name(d) for d in extra}, (package, module)
            continue
        dist = _dist(module)
        assert dist, f"{package} imports {module}: add it to DISTRIBUTION and declare it"
        if dist == "zl-backend-example":
            continue
        needed.add(dist)
    assert needed - declared == set(), f"{package} imports undeclared {needed - declared}"
    assert declared - needed == set(), f"{package} declares unused {declared - needed}"
    assert not declared & USERS_BUILD


def test_the_zl_packages_share_one_version_and_pin_each_other_to_it():
    versions = {package: _project(package)["version"] for package in FIRST_PARTY}
    assert len(set(versions.values())) == 1, versions
    version = versions["zl-core"]
    for package in FIRST_PARTY:
        project = _project(package)
        for requirement in [*project.get("dependencies", []),
                            *project.get("optional-dependencies", {}).get("report", [])]:
            if _name(requirement).startswith("zl-"):
                assert requirement == f"{_name(requirement)}=={version}", (package, requirement)
    # A third party's backend (the template) takes a range that admits this version.
    template = [d for d in _project("_template")["dependencies"] if d.startswith("zl-core")]
    assert template == [f"zl-core>={version},<0.{int(version.split('.')[1]) + 1}"]


def test_every_third_party_dependency_has_the_lower_bound_the_lowest_session_installs():
    for package in FIRST_PARTY:
        project = _project(package)
        # nvml (zl-backend-cuda's NVML sampler) is bounded too, though no test session
        # installs it: its tests use a stand-in pynvml (tests/test_backend_cuda_nvml.py).
        for requirement in [*project.get("dependencies", []),
                            *project.get("optional-dependencies", {}).get("dask", []),
                            *project.get("optional-dependencies", {}).get("nvml", [])]:
            if not _name(requirement).startswith("zl-"):
                assert ">=" in requirement, (package, requirement)
