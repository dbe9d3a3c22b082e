"""The built-in benchmark suite: FlagGems' benchmark protocol over zl's own Triton kernels.

Run from the folder above this one, as FlagGems' suite is run from its checkout:

    python -m pytest -c pytest.ini --rootdir . -s benchmark/test_mm.py::test_mm --level core

That folder has no ``__init__.py`` on purpose: pytest then imports this package
as ``benchmark`` (``benchmark.base``, ``benchmark.conftest``), the names under
which zl's pytest plugins find FlagGems' suite.
"""
