"""pytest plugin: fixed random seeds (``ZL_SEED``, default 0) at start and before each test.

Seeds Python's ``random``, numpy when installed, torch's CPU generator and every
device generator of the backend's torch namespace. Input tensors are then the
same on both sides of a comparison.
"""

from __future__ import annotations

import importlib
import random
import sys
from typing import Any

from zl_core.interface import contract

from zl_flaggems.cell import cellenv

PLUGIN = "seed"


def seed_value() -> int:
    return cellenv.env_int(contract.SEED, 0, minimum=0)


def _optional(name: str):
    """The module, or None when it is not installed; one that is installed but fails to
    import is named with its error (its generator then goes unseeded)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - a broken install: said, and that generator skipped
        cellenv.note(PLUGIN, f"cannot import {name}: {cellenv.one_line(exc)}")
        return None


def seed_all(seed: int) -> list[str]:
    """Seed every generator found; returns the names seeded."""
    seeded = ["random"]
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is None:
        numpy = _optional("numpy")
    if numpy is not None:
        try:
            numpy.random.seed(seed)
            seeded.append("numpy")
        except Exception as exc:  # noqa: BLE001
            cellenv.note(PLUGIN, f"numpy.random.seed failed: {cellenv.one_line(exc)}")
    torch = sys.modules.get("torch")
    if torch is None:
        torch = _optional("torch")  # torch-less processes (tests) still get random/numpy
    if torch is not None:
        try:
            torch.manual_seed(seed)
            seeded.append("torch")
        except Exception as exc:  # noqa: BLE001
            cellenv.note(PLUGIN, f"torch.manual_seed failed: {cellenv.one_line(exc)}")
        backend = cellenv.backend(PLUGIN)
        name = getattr(backend, "torch_namespace", "") if backend is not None else ""
        namespace = getattr(torch, name, None) if name else None
        seed_devices = getattr(namespace, "manual_seed_all", None)
        if callable(seed_devices):
            try:
                seed_devices(seed)
                seeded.append(f"torch.{name}")
            except Exception as exc:  # noqa: BLE001
                cellenv.note(PLUGIN, f"torch.{name}.manual_seed_all failed: {cellenv.one_line(exc)}")
    return seeded


def pytest_configure(config: Any) -> None:
    cellenv.bind_config(config)
    seed = seed_value()
    seeded = seed_all(seed)
    cellenv.merge_identity(PLUGIN, {"seed": seed})
    cellenv.note(PLUGIN, f"seed={seed} ({', '.join(seeded)})")


def pytest_runtest_setup(item: Any) -> None:
    seed_all(seed_value())
