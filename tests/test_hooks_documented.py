"""Every hook has a docstring of the house template, a row in docs/plugins.md and
a test that exercises it (datasette's meta-test, in spirit)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from zl_core.plugins import hookspecs

ROOT = Path(__file__).resolve().parents[1]
HOOKS = sorted(hookspecs.__all__)


def test_all_lists_every_hookspec():
    defined = sorted(n for n, f in vars(hookspecs).items() if n.startswith("zl_") and callable(f))
    assert defined == HOOKS


@pytest.mark.parametrize("name", HOOKS)
def test_hook_docstring_follows_the_template(name):
    spec = getattr(hookspecs, name)
    doc = inspect.getdoc(spec) or ""
    assert "Implemented by:" in doc
    assert ":return:" in doc
    for param in inspect.signature(spec).parameters:
        assert f":param {param}:" in doc, f"{name}: undocumented parameter {param}"
    firstresult = spec.zl_spec["firstresult"]
    assert ("Stops at first non-None result." in doc) == firstresult


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_and_tested(name):
    assert f"`{name}(" in (ROOT / "docs" / "plugins.md").read_text()
    here = Path(__file__).name
    users = [p.name for p in (ROOT / "tests").glob("test_*.py") if p.name != here and name in p.read_text()]
    assert users, f"{name} is exercised by no test"
